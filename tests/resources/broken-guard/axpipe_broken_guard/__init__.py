"""A guard plugin whose module cannot be imported."""
