"""Versioned schema migrations, run when a repository opens its tables.

Each repository (the archive, the audit log, the usage and session tables) declares a `Schema`:
a name and its migrations, numbered 1, 2, 3, ... with no gap. `migrate` records every applied
one in ``schema_migrations`` (schema, version, description, applied_at), so one database can
hold several repositories' tables, each at its own version. At open:

- a database without the table (new, or written before migrations existed) gets it; the first
  migration of each schema uses ``IF NOT EXISTS``, so the tables an older bridge made are
  taken over as they are;
- migrations newer than the recorded version run in order, all in one transaction with the
  version rows: a failure leaves the database as it was;
- a database whose recorded version is newer than this bridge knows is refused with
  `SchemaTooNewError`: an older bridge must not write tables whose meaning has moved on.

On PostgreSQL two bridges may start together: the transaction first takes an advisory lock,
so one migrates while the other waits and then finds nothing left to do.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from bridge.errors import StoreError
from bridge.store.database import Database, DatabaseError, SqliteDatabase, Transaction

MIGRATIONS_TABLE = "schema_migrations"

_ADVISORY_LOCK_KEY = 0x4D434C57  # "MCLW": one lock for every schema's migrations

_CREATE_TABLE = f"""
CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} (
    schema_name TEXT NOT NULL,
    version     INTEGER NOT NULL,
    description TEXT NOT NULL,
    applied_at  TEXT NOT NULL,
    PRIMARY KEY (schema_name, version)
)"""


class SchemaTooNewError(DatabaseError):
    """The database was migrated by a newer bridge than this one."""


@dataclass(frozen=True, slots=True)
class Migration:
    """One step of a schema. ``sqlite`` and ``postgresql`` are the statements for each
    dialect, run in order (give the same tuple twice when they agree)."""

    version: int
    description: str
    sqlite: tuple[str, ...]
    postgresql: tuple[str, ...]

    @classmethod
    def portable(cls, version: int, description: str, *statements: str) -> Migration:
        """A migration whose statements both dialects accept as written."""
        return cls(version, description, statements, statements)

    def statements(self, dialect: str) -> tuple[str, ...]:
        return self.sqlite if dialect == "sqlite" else self.postgresql


@dataclass(frozen=True, slots=True)
class Schema:
    """A repository's tables: its migrations, versions 1..n in order.

    ``sqlite_user_version``: mirror the version in SQLite's ``PRAGMA user_version`` too (the
    archive file carried its version there before this table existed; a file stamped higher
    than this bridge knows is refused)."""

    name: str
    migrations: tuple[Migration, ...]
    sqlite_user_version: bool = False

    def __post_init__(self) -> None:
        versions = [m.version for m in self.migrations]
        if versions != list(range(1, len(versions) + 1)):
            raise ValueError(f"schema {self.name}: migrations must be numbered 1..n, {versions}")

    @property
    def latest(self) -> int:
        return len(self.migrations)


def migrate(db: Database, schema: Schema) -> int:
    """Bring ``schema`` in ``db`` to its latest version; the version it had before.

    Raises `SchemaTooNewError` for a database ahead of this bridge, `DatabaseError` when a
    migration fails (nothing of it is kept)."""
    if schema.sqlite_user_version and isinstance(db, SqliteDatabase):
        stamped = db.user_version()
        if stamped > schema.latest:
            raise _too_new(db, schema, stamped)
    if db.read_only:
        return _checked(db, schema)
    with db.transaction() as tx:
        if db.dialect == "postgresql":
            # A migration may rebuild a large table, and a second bridge waits here for the
            # first one's: neither is a stuck statement.
            tx.execute("SET LOCAL statement_timeout = 0")
            tx.lift_deadline()
            tx.query("SELECT pg_advisory_xact_lock(?)", (_ADVISORY_LOCK_KEY,))
        tx.execute(_CREATE_TABLE)
        before = recorded_version(tx, schema.name)
        if before > schema.latest:
            raise _too_new(db, schema, before)
        for migration in schema.migrations[before:]:
            for statement in migration.statements(db.dialect):
                tx.execute(statement)
            tx.execute(
                f"INSERT INTO {MIGRATIONS_TABLE} (schema_name, version, description, applied_at)"
                " VALUES (?, ?, ?, ?)",
                (schema.name, migration.version, migration.description, _now()),
            )
    if schema.sqlite_user_version and isinstance(db, SqliteDatabase):
        db.set_user_version(schema.latest)
    return before


def open_migrated(
    database: Path | Database,
    schema: Schema,
    *,
    label: str,
    synchronous: Literal["FULL", "NORMAL"] = "FULL",
    error: type[StoreError] = StoreError,
) -> Database:
    """A repository's database with ``schema`` migrated: ``database`` is a SQLite path (opened
    with ``synchronous``) or an open `Database`, which the caller then owns.

    Raises `SchemaTooNewError` as it is, and any other failure as ``error`` ("cannot open the
    <label> at <where>: <reason>"); either way nothing stays open."""
    where = database.description if isinstance(database, Database) else str(database)
    db = database if isinstance(database, Database) else None
    try:
        if db is None:
            assert isinstance(database, Path)
            db = SqliteDatabase(database, synchronous=synchronous)
        migrate(db, schema)
    except StoreError as exc:
        if db is not None:
            db.close()
        if isinstance(exc, SchemaTooNewError):
            raise
        raise error(f"cannot open the {label} at {where}: {exc}") from exc
    return db


def _checked(db: Database, schema: Schema) -> int:
    """A reader's check (``db.read_only``): the schema is exactly this bridge's, as the bridge
    that writes the database migrated it; nothing is written."""
    try:
        rows = db.query(
            f"SELECT MAX(version) FROM {MIGRATIONS_TABLE} WHERE schema_name = ?", (schema.name,)
        )
    except StoreError as exc:
        raise StoreError(f"{db.description}: no schemas recorded yet ({exc})") from exc
    found = int(rows[0][0]) if rows and rows[0][0] is not None else 0
    if found > schema.latest:
        raise _too_new(db, schema, found)
    if found < schema.latest:
        raise StoreError(
            f"{db.description}: the {schema.name} schema is at version {found}, not"
            f" {schema.latest}; the bridge migrates it when it starts"
        )
    return found


def recorded_version(tx: Transaction, schema_name: str) -> int:
    """The highest version of ``schema_name`` applied (0: none)."""
    rows = tx.query(
        f"SELECT MAX(version) FROM {MIGRATIONS_TABLE} WHERE schema_name = ?", (schema_name,)
    )
    value = rows[0][0] if rows else None
    return int(value) if value is not None else 0


def _too_new(db: Database, schema: Schema, found: int) -> SchemaTooNewError:
    return SchemaTooNewError(
        f"{db.description}: the {schema.name} schema is at version {found}, newer than this"
        f" bridge knows ({schema.latest}); run the bridge version that wrote it, or a newer one"
    )


def _now() -> str:
    return datetime.now(UTC).isoformat()
