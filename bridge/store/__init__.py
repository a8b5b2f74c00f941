"""Persistence: the lossless turn archive and the audit log (SQLite, WAL)."""
