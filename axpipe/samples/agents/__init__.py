"""Scripted agents the demo recipes use: small programs that make real, deterministic edits."""
