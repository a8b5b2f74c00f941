"""The audit log's facets: what the console filters by, read out of each event's fields.

Events name the same thing with different keys (a ``tool.invoke`` has ``player``, a
``run_command.decision`` ``requester``, an ``approval.answer`` ``sender``), so each facet is the
first of its keys an event has. Each facet has an expression index ``(facet, seq)`` (audit
migration 2), so a filtered page is an index range walked newest first, never a scan, and the
writer stays as it was: the database computes the facet when it inserts the row.
"""

from __future__ import annotations

from typing import Literal

Facet = Literal["player", "tool", "server", "outcome"]

FACET_KEYS: dict[Facet, tuple[str, ...]] = {
    "player": ("player", "requester", "sender"),
    "tool": ("tool", "function"),
    "server": ("server", "server_id"),
    "outcome": ("status", "verdict", "outcome", "error_code"),
}


def facet_sql(dialect: Literal["sqlite", "postgresql"], facet: Facet) -> str:
    """The facet's SQL expression; the index and every query use this exact text."""
    if dialect == "sqlite":
        parts = [f"json_extract(fields_json, '$.{key}')" for key in FACET_KEYS[facet]]
    else:
        parts = [f"((fields_json)::jsonb ->> '{key}')" for key in FACET_KEYS[facet]]
    return f"COALESCE({', '.join(parts)})"


def facet_indexes(dialect: Literal["sqlite", "postgresql"]) -> tuple[str, ...]:
    facets: tuple[Facet, ...] = ("player", "tool", "server", "outcome")
    return (
        *(
            f"CREATE INDEX IF NOT EXISTS audit_by_{facet} ON audit_events"
            f" ({facet_sql(dialect, facet)}, seq)"
            for facet in facets
        ),
        "CREATE INDEX IF NOT EXISTS audit_by_at ON audit_events (at, seq)",
    )
