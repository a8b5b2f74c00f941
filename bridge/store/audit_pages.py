"""Reading the audit log a page at a time, newest first, by index (the console).

A page is ``ORDER BY seq DESC LIMIT n`` below a cursor (the last ``seq`` of the page before),
with at most one facet or kind condition driving an index range (``audit_by_kind``, the facet
indexes of `bridge.store.audit_facets`); no page ever counts or scans the table. A time window
is turned into a ``seq`` range first, through ``audit_by_at`` (the writer appends in time order),
so ``since``/``until`` bound the primary key rather than filter row by row.

`AuditPages` has a database connection of its own: a page read never waits behind the audit
writer's lock, and on SQLite (WAL) never holds the writer up either.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bridge.errors import StoreError
from bridge.store.audit import SCHEMA, AuditEvent
from bridge.store.audit_facets import Facet, facet_sql
from bridge.store.database import Database, DatabaseError
from bridge.store.migrations import open_migrated

MAX_FILTER_CHARS = 128


class AuditReadError(StoreError):
    """A page of the audit log could not be read."""


@dataclass(frozen=True, slots=True)
class AuditFilter:
    """Exact matches (None: any). ``since`` is inclusive, ``until`` exclusive."""

    kind: str | None = None
    player: str | None = None
    tool: str | None = None
    server: str | None = None
    outcome: str | None = None
    since: datetime | None = None
    until: datetime | None = None

    def facets(self) -> list[tuple[Facet, str]]:
        chosen: list[tuple[Facet, str | None]] = [
            ("player", self.player),
            ("tool", self.tool),
            ("server", self.server),
            ("outcome", self.outcome),
        ]
        return [(facet, value[:MAX_FILTER_CHARS]) for facet, value in chosen if value]


@dataclass(frozen=True, slots=True)
class AuditPage:
    events: tuple[AuditEvent, ...]
    next_before: int | None
    """The cursor of the next (older) page; None on the last page."""


class AuditPages:
    """``database``: an open `Database` on the audit log's tables (owned, closed by `close`)."""

    def __init__(self, database: Database) -> None:
        self._db = open_migrated(database, SCHEMA, label="audit log", error=AuditReadError)
        self._dialect = self._db.dialect

    def page(self, chosen: AuditFilter, *, before: int | None, limit: int) -> AuditPage:
        """Up to ``limit`` events matching ``chosen``, newest first, older than ``before``."""
        limit = max(1, limit)
        where: list[str] = []
        params: list[Any] = []
        try:
            low, high = self._seq_window(chosen)
            if low is not None and high is not None and low >= high:
                return AuditPage((), None)
            if before is not None:
                high = before if high is None else min(high, before)
            if low is not None:
                where.append("seq >= ?")
                params.append(low)
            if high is not None:
                where.append("seq < ?")
                params.append(high)
            if chosen.kind:
                where.append("kind = ?")
                params.append(chosen.kind[:MAX_FILTER_CHARS])
            for facet, value in chosen.facets():
                where.append(f"{facet_sql(self._dialect, facet)} = ?")
                params.append(value)
            sql = "SELECT seq, at, kind, fields_json FROM audit_events"
            if where:
                sql += " WHERE " + " AND ".join(where)
            rows = self._db.query(f"{sql} ORDER BY seq DESC LIMIT ?", (*params, limit + 1))
        except DatabaseError as exc:
            raise AuditReadError(f"cannot read the audit log: {exc}") from exc
        events = tuple(
            AuditEvent(int(seq), datetime.fromisoformat(at), kind, json.loads(fields))
            for seq, at, kind, fields in rows[:limit]
        )
        more = len(rows) > limit
        return AuditPage(events, events[-1].seq if more and events else None)

    def walk(
        self, chosen: AuditFilter, *, rows: int, page_rows: int = 1000
    ) -> Iterator[AuditEvent]:
        """Up to ``rows`` matching events, newest first, a page at a time (the export)."""
        before: int | None = None
        left = rows
        while left > 0:
            page = self.page(chosen, before=before, limit=min(page_rows, left))
            yield from page.events
            left -= len(page.events)
            if page.next_before is None:
                return
            before = page.next_before

    def _seq_window(self, chosen: AuditFilter) -> tuple[int | None, int | None]:
        """``since``/``until`` as [low, high) over ``seq`` through the time index."""
        low = high = None
        if chosen.since is not None:
            found = self._first_seq_at_or_after(chosen.since)
            low = found if found is not None else _AFTER_EVERYTHING
        if chosen.until is not None:
            high = self._first_seq_at_or_after(chosen.until)
        return low, high

    def _first_seq_at_or_after(self, moment: datetime) -> int | None:
        rows = self._db.query(
            "SELECT seq FROM audit_events WHERE at >= ? ORDER BY at, seq LIMIT 1",
            (moment.astimezone(UTC).isoformat(),),
        )
        return int(rows[0][0]) if rows else None

    def close(self) -> None:
        self._db.close()


_AFTER_EVERYTHING = 2**62
"""A ``since`` later than every event: a window nothing is in."""
