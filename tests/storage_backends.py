"""The storage backends every store test runs against: SQLite files in the test's folder, and
a fresh database on the session's real PostgreSQL server (`tests.postgres_server`).

Tests take the ``backend`` fixture (``tests/conftest.py``) and open stores through it; what a
test does behind the bridge's back (a trigger that refuses rows, a deleted row, a lost
connection) goes through `Backend.execute` and `Backend.cut_connections`, in each dialect.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import psycopg

from bridge.store.archive import ARCHIVE_FILE_NAME, TurnArchive
from bridge.store.audit import AUDIT_DB_FILE_NAME, AuditLog
from bridge.store.target import StorageTarget
from tests.postgres_server import PostgresServer

Which = Literal["state", "audit"]


@dataclass(frozen=True)
class Backend:
    target: StorageTarget
    server: PostgresServer | None = None
    dbname: str | None = None

    @property
    def name(self) -> str:
        return self.target.backend

    @property
    def is_postgres(self) -> bool:
        return self.target.backend == "postgresql"

    @property
    def data_dir(self) -> Path:
        return self.target.data_dir

    def archive(self) -> TurnArchive:
        return self.target.open_archive()

    def audit(self, **settings: Any) -> AuditLog:
        return self.target.open_audit(**settings)

    def execute(self, *statements: str, which: Which = "state") -> list[tuple[Any, ...]]:
        """Run ``statements`` outside the bridge, committed; the last one's rows (if any)."""
        rows: list[tuple[Any, ...]] = []
        if self.server is not None and self.dbname is not None:
            with psycopg.connect(
                self.server.dsn(self.dbname), password=self.server.password, autocommit=True
            ) as conn:
                for statement in statements:
                    cursor = conn.execute(statement)  # type: ignore[call-overload]
                    rows = cursor.fetchall() if cursor.description else []
            return rows
        file = ARCHIVE_FILE_NAME if which == "state" else AUDIT_DB_FILE_NAME
        conn_ = sqlite3.connect(self.data_dir / file)
        try:
            for statement in statements:
                rows = conn_.execute(statement).fetchall()
            conn_.commit()
        finally:
            conn_.close()
        return rows

    def refuse_inserts(self, table: str, condition: str, message: str, *, which: Which) -> None:
        """A trigger that makes the database itself refuse rows of ``table`` matching
        ``condition`` (in terms of ``NEW``) with ``message``: a real write failure."""
        if self.is_postgres:
            self.execute(
                "CREATE OR REPLACE FUNCTION refuse_rows() RETURNS trigger AS $$ BEGIN"
                f" IF {condition} THEN RAISE EXCEPTION '{message}'; END IF; RETURN NEW;"
                " END $$ LANGUAGE plpgsql",
                f"CREATE TRIGGER refuse BEFORE INSERT ON {table}"
                " FOR EACH ROW EXECUTE FUNCTION refuse_rows()",
                which=which,
            )
        else:
            self.execute(
                f"CREATE TRIGGER refuse BEFORE INSERT ON {table} WHEN {condition}"
                f" BEGIN SELECT RAISE(ABORT, '{message}'); END",
                which=which,
            )

    def cut_connections(self) -> int:
        """End the bridge's open PostgreSQL connections, as a server restart or a network
        failure would; how many were ended."""
        assert self.server is not None and self.dbname is not None
        return self.server.terminate_connections(self.dbname)
