"""Where the bridge keeps its persistent state, and opening it.

``sqlite`` (the default): files in ``<config>/data``: ``archive.sqlite3`` (the archive, and the
place for a new repository's tables unless it has reason for a file of its own;
``synchronous=FULL``), ``audit.sqlite3`` (the audit log, ``synchronous=NORMAL``, so the audit
writer's frequent commits never wait behind an archive fsync), ``usage.sqlite3`` (the usage
ledger). ``postgresql``: one database, named by a DSN, holds all of them; each repository opened
here gets its own connection. The audit log's JSON-lines copy is always a local file
in the data folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bridge.errors import StoreError
from bridge.store.archive import ARCHIVE_FILE_NAME, TurnArchive
from bridge.store.audit import AUDIT_DB_FILE_NAME, AUDIT_JSONL_FILE_NAME, AuditLog
from bridge.store.audit_pages import AuditPages
from bridge.store.console_logins import ConsoleLogins
from bridge.store.database import (
    DEADLINE_S,
    STATEMENT_TIMEOUT_MS,
    Database,
    PostgresDatabase,
    SqliteDatabase,
)
from bridge.store.player_state import PlayerState
from bridge.store.reviews import FunctionReviews
from bridge.store.usage import USAGE_FILE_NAME, UsageLedger

Backend = Literal["sqlite", "postgresql"]


@dataclass(frozen=True, slots=True)
class StorageTarget:
    """``data_dir``: the local data folder (SQLite files, the audit JSON-lines copy).
    ``dsn`` and ``password``: the PostgreSQL database (the password apart from the DSN, from
    ``.env``; never shown). ``deadline_s`` and ``statement_timeout_ms``: each PostgreSQL
    connection's bounds (`bridge.store.database`)."""

    data_dir: Path
    backend: Backend = "sqlite"
    dsn: str | None = None
    password: str | None = field(default=None, repr=False)
    deadline_s: float = DEADLINE_S
    statement_timeout_ms: int = STATEMENT_TIMEOUT_MS
    commit_deadline_s: float | None = None
    """The own deadline of a turn's archive commit and of its usage record (None:
    ``deadline_s``)."""
    read_only: bool = False
    """Every connection opened here refuses writes and checks the schemas instead of migrating
    them (the console process's readers)."""

    def __post_init__(self) -> None:
        if self.backend == "postgresql" and not self.dsn:
            raise StoreError("the postgresql storage backend needs a DSN")

    def open_state(self) -> Database:
        """The database of the archive and of every repository but the audit log."""
        if self.backend == "sqlite":
            return SqliteDatabase(
                self.data_dir / ARCHIVE_FILE_NAME, synchronous="FULL", read_only=self.read_only
            )
        return self._postgres(synchronous_commit=True)

    def open_audit_database(self) -> Database:
        if self.backend == "sqlite":
            return SqliteDatabase(
                self.data_dir / AUDIT_DB_FILE_NAME, synchronous="NORMAL", read_only=self.read_only
            )
        return self._postgres(synchronous_commit=False)

    def open_archive(self) -> TurnArchive:
        try:
            database = self.open_state()
        except StoreError as exc:
            raise StoreError(f"cannot open the turn archive: {exc}") from exc
        return TurnArchive(database, commit_deadline_s=self.commit_deadline_s)

    def open_audit(self, **settings: Any) -> AuditLog:
        try:
            database = self.open_audit_database()
        except StoreError as exc:
            raise StoreError(f"cannot open the audit log: {exc}") from exc
        return AuditLog(database, self.data_dir / AUDIT_JSONL_FILE_NAME, **settings)

    def open_usage(self) -> UsageLedger:
        """The token usage ledger (``usage.sqlite3``, or the PostgreSQL database)."""
        try:
            database: Database = (
                SqliteDatabase(
                    self.data_dir / USAGE_FILE_NAME, synchronous="FULL", read_only=self.read_only
                )
                if self.backend == "sqlite"
                else self._postgres(synchronous_commit=True)
            )
        except StoreError as exc:
            raise StoreError(f"cannot open the usage ledger: {exc}") from exc
        return UsageLedger(database, record_deadline_s=self.commit_deadline_s)

    def open_audit_pages(self) -> AuditPages:
        """A reader of the audit log on a connection of its own (the console)."""
        try:
            return AuditPages(self.open_audit_database())
        except StoreError as exc:
            raise StoreError(f"cannot open the audit log for reading: {exc}") from exc

    def open_console_logins(self) -> ConsoleLogins:
        """The console's one-time login links (the state database)."""
        try:
            return ConsoleLogins(self.open_state())
        except StoreError as exc:
            raise StoreError(f"cannot open the console logins: {exc}") from exc

    def open_reviews(self) -> FunctionReviews:
        """The Function reviews (the state database: ``archive.sqlite3`` or PostgreSQL)."""
        try:
            database = self.open_state()
        except StoreError as exc:
            raise StoreError(f"cannot open the function reviews: {exc}") from exc
        return FunctionReviews(database)

    def open_player_state(self) -> PlayerState:
        """Every player's conversations, persona choice, listen opt-out, retry offer and owed
        lines (the state database), on a connection of their own."""
        try:
            return PlayerState(self.open_state())
        except StoreError as exc:
            raise StoreError(f"cannot open the player state: {exc}") from exc

    def _postgres(self, *, synchronous_commit: bool) -> PostgresDatabase:
        assert self.dsn is not None  # checked in __post_init__
        return PostgresDatabase(
            self.dsn,
            password=self.password,
            synchronous_commit=synchronous_commit,
            read_only=self.read_only,
            deadline_s=self.deadline_s,
            statement_timeout_ms=self.statement_timeout_ms,
        )


def open_stores(target: StorageTarget) -> tuple[TurnArchive, AuditLog]:
    """The archive and the audit log, both migrated; nothing stays open when either fails."""
    archive = target.open_archive()
    try:
        audit = target.open_audit()
    except BaseException:
        archive.close()
        raise
    return archive, audit
