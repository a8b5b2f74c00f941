"""Default workspace files (package data)."""
