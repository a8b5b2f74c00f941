"""Default skills (package data)."""
