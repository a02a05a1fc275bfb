"""Placeholder package; filled by the operator registry work."""
