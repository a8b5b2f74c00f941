"""Versioned schema migrations on both backends: a new database is built, an older one is
upgraded in place with its data, a newer one is refused, and a failing migration leaves
nothing behind."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bridge.store import archive as archive_module
from bridge.store import audit as audit_module
from bridge.store.archive import ArchivedTurn, TurnArchive
from bridge.store.audit import AuditLog
from bridge.store.database import DatabaseError, SqliteDatabase
from bridge.store.migrations import (
    MIGRATIONS_TABLE,
    Migration,
    Schema,
    SchemaTooNewError,
    migrate,
)
from bridge.store.target import StorageTarget
from tests.storage_backends import Backend

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

# The archive file exactly as the bridge wrote it before migrations existed (schema and stamp).
OLD_ARCHIVE_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    turn_id         TEXT NOT NULL UNIQUE,
    session_id      TEXT NOT NULL,
    player          TEXT NOT NULL,
    started_at      TEXT NOT NULL,
    ended_at        TEXT NOT NULL,
    model_ref       TEXT NOT NULL,
    control_version TEXT NOT NULL,
    item_count      INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS turns_by_session ON turns (session_id, seq);
CREATE TABLE IF NOT EXISTS turn_items (
    turn_id   TEXT NOT NULL REFERENCES turns (turn_id),
    position  INTEGER NOT NULL,
    item_json TEXT NOT NULL,
    PRIMARY KEY (turn_id, position)
);
"""
OLD_AUDIT_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit_events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TEXT NOT NULL,
    kind        TEXT NOT NULL,
    fields_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_by_kind ON audit_events (kind, seq);
"""


def turn(turn_id: str, player: str = "Alex") -> ArchivedTurn:
    return ArchivedTurn(
        turn_id=turn_id,
        session_id="s1",
        player=player,
        started_at=T0,
        ended_at=T0 + timedelta(seconds=1),
        model_ref="openai/gpt-x",
        control_version="7",
        items=({"type": "message", "text": f"from {turn_id}"},),
    )


def applied(backend: Backend, schema: str) -> list[int]:
    rows = backend.execute(
        f"SELECT version FROM {MIGRATIONS_TABLE} WHERE schema_name = '{schema}' ORDER BY version",
        which="audit" if schema == "audit" else "state",
    )
    return [int(row[0]) for row in rows]


def test_a_file_written_by_the_old_schema_opens_and_is_upgraded(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    with sqlite3.connect(data / "archive.sqlite3") as conn:
        conn.executescript(OLD_ARCHIVE_SCHEMA + "PRAGMA user_version=1;")
        conn.execute(
            "INSERT INTO turns (turn_id, session_id, player, started_at, ended_at, model_ref,"
            " control_version, item_count) VALUES ('old-1', 's1', 'Alex', ?, ?, 'm/x', '3', 1)",
            (T0.isoformat(), T0.isoformat()),
        )
        conn.execute("INSERT INTO turn_items VALUES ('old-1', 0, '{\"text\": \"kept\"}')")
    with sqlite3.connect(data / "audit.sqlite3") as conn:
        conn.executescript(OLD_AUDIT_SCHEMA)
        conn.execute(
            "INSERT INTO audit_events (at, kind, fields_json) VALUES (?, 'turn.start', '{}')",
            (T0.isoformat(),),
        )
    archive_target = StorageTarget(data)
    backend = Backend(archive_target)
    with backend.archive() as archive:
        assert [t.turn_id for t in archive.all_turns()] == ["old-1"]
        assert archive.all_turns()[0].items == ({"text": "kept"},)
        archive.append(turn("new-1"))
        assert [t.turn_id for t in archive.turns_of_player("Alex")] == ["old-1", "new-1"]
    with backend.audit() as log:
        log.record("turn.end", {})
        log.flush()
        assert [e.kind for e in log.events()] == ["turn.start", "turn.end"]
    assert applied(backend, "archive") == [1, 2, 3]
    assert applied(backend, "audit") == [1, 2]  # the facet indexes of the console
    with sqlite3.connect(archive_target.data_dir / "archive.sqlite3") as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (3,)
        indexes = {row[1] for row in conn.execute("PRAGMA index_list('turns')")}
    assert "turns_by_player" in indexes
    assert "turns_by_ask" in indexes


def test_a_new_database_gets_every_migration_once(backend: Backend) -> None:
    with backend.archive():
        pass
    with backend.audit():
        pass
    with backend.archive(), backend.audit():  # opening again applies nothing twice
        pass
    assert applied(backend, "archive") == list(range(1, archive_module.SCHEMA.latest + 1))
    assert applied(backend, "audit") == list(range(1, audit_module.SCHEMA.latest + 1))


def test_an_older_version_is_upgraded_in_place_with_its_data(backend: Backend) -> None:
    # The archive as version 1 left it, holding a turn; opening it now runs the later ones.
    first_only = Schema("archive", archive_module.SCHEMA.migrations[:1])
    database = backend.target.open_state()
    assert migrate(database, first_only) == 0
    database.close()
    backend.execute(
        "INSERT INTO turns (turn_id, session_id, player, started_at, ended_at, model_ref,"
        f" control_version, item_count) VALUES ('v1', 's1', 'Alex', '{T0.isoformat()}',"
        f" '{T0.isoformat()}', 'm/x', '1', 0)"
    )
    assert applied(backend, "archive") == [1]
    with backend.archive() as archive:
        assert [t.turn_id for t in archive.turns_of_player("Alex")] == ["v1"]
        assert archive.turns_of_player("Alex")[0].ask is None  # answered no kept question
    assert applied(backend, "archive") == list(range(1, archive_module.SCHEMA.latest + 1))


@pytest.mark.parametrize("which", ["archive", "audit"])
def test_a_database_newer_than_the_code_is_refused(backend: Backend, which: str) -> None:
    with backend.archive(), backend.audit():
        pass
    schema = archive_module.SCHEMA if which == "archive" else audit_module.SCHEMA
    ahead = schema.latest + 1
    backend.execute(
        f"INSERT INTO {MIGRATIONS_TABLE} VALUES ('{which}', {ahead}, 'from the future', 'x')",
        which="audit" if which == "audit" else "state",
    )
    expected = f"the {which} schema is at version {ahead}, newer than this bridge knows"
    with pytest.raises(SchemaTooNewError, match=expected):
        backend.archive() if which == "archive" else backend.audit()
    # Refused, not changed: the rows are as they were.
    assert applied(backend, which)[-1] == ahead


def test_a_failing_migration_leaves_nothing_behind(backend: Backend) -> None:
    broken = Schema(
        "usage",
        (
            Migration.portable(1, "usage table", "CREATE TABLE usage_rows (player TEXT)"),
            Migration.portable(2, "a typo", "CREATE TABEL oops (x TEXT)"),
        ),
    )
    database = backend.target.open_state()
    try:
        with pytest.raises(DatabaseError):
            migrate(database, broken)
        with pytest.raises(DatabaseError):
            database.query("SELECT COUNT(*) FROM usage_rows")
        fixed = Schema("usage", broken.migrations[:1])
        assert migrate(database, fixed) == 0
        assert database.query("SELECT COUNT(*) FROM usage_rows") == [(0,)]
    finally:
        database.close()
    assert applied(backend, "usage") == [1]


def test_two_bridges_starting_together_migrate_once(backend: Backend) -> None:
    schema = Schema(
        "lanes",
        (
            Migration.portable(1, "lanes", "CREATE TABLE lanes (player TEXT PRIMARY KEY)"),
            Migration.portable(2, "lane size", "ALTER TABLE lanes ADD COLUMN size INTEGER"),
        ),
    )
    databases = [backend.target.open_state() for _ in range(4)]
    start = threading.Barrier(len(databases))
    failures: list[BaseException] = []

    def run(index: int) -> None:
        start.wait()
        try:
            migrate(databases[index], schema)
        except BaseException as exc:  # collected and asserted below
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(databases))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for database in databases:
        database.close()
    assert failures == []
    assert applied(backend, "lanes") == [1, 2]


def test_migrations_must_be_numbered_without_gaps() -> None:
    with pytest.raises(ValueError, match="numbered 1..n"):
        Schema("x", (Migration.portable(2, "two", "SELECT 1"),))


def test_a_sqlite_file_stamped_newer_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.db"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version=7")
    with pytest.raises(SchemaTooNewError, match="version 7"):
        TurnArchive(path)
    database = SqliteDatabase(path)
    assert database.query(f"SELECT name FROM sqlite_master WHERE name = '{MIGRATIONS_TABLE}'") == []
    database.close()


def test_the_audit_log_refuses_to_open_on_a_newer_schema_without_a_thread(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with AuditLog.in_data_dir(data):
        pass
    with sqlite3.connect(data / "audit.sqlite3") as conn:
        conn.execute(f"INSERT INTO {MIGRATIONS_TABLE} VALUES ('audit', 99, 'future', 'x')")
    before = threading.active_count()
    with pytest.raises(SchemaTooNewError, match="version 99"):
        AuditLog.in_data_dir(data)
    assert threading.active_count() == before
