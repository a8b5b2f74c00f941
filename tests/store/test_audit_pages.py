"""The audit log read a page at a time (the console), on both backends: each facet filter,
the time window, the cursor, and (on SQLite) that a filtered page walks an index, never the
table."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bridge.store.audit_facets import Facet, facet_sql
from bridge.store.audit_pages import AuditFilter, AuditPages
from bridge.store.database import SqliteDatabase
from bridge.store.target import StorageTarget
from tests.storage_backends import Backend

START = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def _fill(backend: Backend) -> None:
    clock = iter(START + timedelta(minutes=n) for n in range(1000))
    audit = backend.target.open_audit(clock=lambda: next(clock))
    try:
        for n in range(40):
            player = ("Steve", "Alex")[n % 2]
            audit.record("tool.invoke", {"player": player, "tool": "time", "status": "ok", "n": n})
            if n % 10 == 0:
                audit.record(
                    "run_command.decision",
                    {"requester": "Steve", "verdict": "deny", "server": "lobby", "n": n},
                )
        audit.flush()
    finally:
        audit.close()


def _ns(pages: AuditPages, chosen: AuditFilter, limit: int = 100) -> list[int]:
    page = pages.page(chosen, before=None, limit=limit)
    return [int(str(event.fields["n"])) for event in page.events]


def test_facets_time_window_and_cursor(backend: Backend) -> None:
    _fill(backend)
    pages = backend.target.open_audit_pages()
    try:
        assert _ns(pages, AuditFilter(player="Steve", kind="run_command.decision")) == [
            30,
            20,
            10,
            0,
        ]
        assert _ns(pages, AuditFilter(outcome="deny")) == [30, 20, 10, 0]
        assert _ns(pages, AuditFilter(server="lobby")) == [30, 20, 10, 0]
        assert len(_ns(pages, AuditFilter(tool="time"))) == 40
        assert len(_ns(pages, AuditFilter(player="Steve"))) == 20 + 4
        # Minutes 0..43 hold the 44 events in order; [10, 15) is five of them.
        window = AuditFilter(
            since=START + timedelta(minutes=10), until=START + timedelta(minutes=15)
        )
        assert len(pages.page(window, before=None, limit=100).events) == 5
        late = AuditFilter(since=START + timedelta(days=1))
        assert pages.page(late, before=None, limit=100).events == ()
        first = pages.page(AuditFilter(tool="time"), before=None, limit=15)
        assert first.next_before is not None
        second = pages.page(AuditFilter(tool="time"), before=first.next_before, limit=15)
        seqs = [e.seq for e in first.events + second.events]
        assert seqs == sorted(seqs, reverse=True) and len(set(seqs)) == 30
        walked = list(pages.walk(AuditFilter(tool="time"), rows=1000, page_rows=7))
        assert len(walked) == 40
    finally:
        pages.close()


@pytest.mark.parametrize("facet", ["player", "tool", "server", "outcome"])
def test_a_filtered_page_walks_an_index(tmp_path: Path, facet: Facet) -> None:
    _fill(Backend(StorageTarget(tmp_path / "data")))
    db = SqliteDatabase(tmp_path / "data" / "audit.sqlite3")
    try:
        plan = db.query(
            "EXPLAIN QUERY PLAN SELECT seq FROM audit_events"
            f" WHERE {facet_sql('sqlite', facet)} = ? ORDER BY seq DESC LIMIT 50",
            ("x",),
        )
    finally:
        db.close()
    details = " ".join(str(row[-1]) for row in plan)
    assert f"USING INDEX audit_by_{facet}" in details
    assert "TEMP B-TREE" not in details  # no sort: the index gives the order
