"""The migrated ledger: one module per batch of the legacy export."""

MIGRATED_FROM = "export-v1"
