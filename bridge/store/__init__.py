"""Persistence: the turn archive, the audit log and the usage ledger, on SQLite (the embedded
default) or PostgreSQL, behind one interface.

- `database`: `Database` (one connection under a lock; ``transaction()``, ``query()``) with
  `SqliteDatabase` and `PostgresDatabase`; every failure is a `DatabaseError` (`StoreError`).
- `migrations`: `Schema` and `Migration`; `migrate(db, schema)` runs at open (recorded in
  ``schema_migrations``; an older database is upgraded, a newer one refused).
- `target`: `StorageTarget`, what ``config.yml``'s ``storage`` names, opens each repository on
  the chosen backend.
- Repositories: `archive` (`TurnArchive`), `audit` (`AuditLog`), `usage` (`UsageLedger`).

Adding a table (a new repository), e.g. ``lanes``:

1. ``bridge/store/lanes.py`` declares ``SCHEMA = Schema("lanes", (Migration(1, ...),))`` with
   each statement for both dialects (`Migration.portable` when they agree; an auto-increment key
   is ``INTEGER PRIMARY KEY AUTOINCREMENT`` on SQLite and ``BIGSERIAL PRIMARY KEY`` on
   PostgreSQL). Its class takes an open `Database`, calls ``migrate(db, SCHEMA)`` in its
   constructor, and reads and writes only through ``db.transaction()`` / ``db.query()`` with
   ``?`` placeholders, catching `DatabaseError`.
2. `StorageTarget` gets an ``open_lanes()`` (on SQLite: ``open_state()``, the archive's file,
   unless the table wants a file of its own; on PostgreSQL: a connection to the one database).
3. A later change to the table is a new `Migration` appended with the next number; never edit
   a migration that has shipped.
4. Its tests take the ``backend`` fixture (``tests/conftest.py``), so they run on SQLite and on
   the real PostgreSQL server the suite starts.
"""
