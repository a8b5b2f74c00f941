"""The console bench's audit log: every filter shape it times finds events, through the same
reader the console uses, so no figure is the time of an empty page."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bench.console_bench import SHAPES, fill_audit
from bridge.store.audit_pages import AuditFilter
from bridge.store.target import StorageTarget


def test_every_timed_shape_finds_events(tmp_path: Path) -> None:
    data = tmp_path / "data"
    fill_audit(data, 30_000)
    pages = StorageTarget(data).open_audit_pages()
    try:
        for name, query in SHAPES:
            chosen = AuditFilter(
                kind=query.get("kind"),
                player=query.get("player"),
                tool=query.get("tool"),
                server=query.get("server"),
                outcome=query.get("outcome"),
                since=_day(query.get("since")),
                until=_day(query.get("until")),
            )
            page = pages.page(chosen, before=None, limit=50)
            assert page.events, name  # the full run has at least 800 of each
    finally:
        pages.close()


def _day(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text).replace(tzinfo=UTC)
