"""The narrow interface every part of the bridge records audit events through.

Producers (turns, tools, approvals, Functions) depend only on this protocol; the SQLite and
JSON-lines audit log implements it, and tests use `MemoryAudit`. Field values must already be
redacted: the sink stores what it is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

JSONScalar = str | int | float | bool | None
JSONValue = JSONScalar | list["JSONValue"] | dict[str, "JSONValue"]


class AuditSink(Protocol):
    def record(self, kind: str, fields: dict[str, JSONValue]) -> None:
        """Record one event of `kind` (dotted, e.g. ``function.start``). Must not block long."""


@dataclass
class MemoryAudit:
    """An in-memory sink for tests and dry runs."""

    events: list[tuple[str, dict[str, JSONValue]]] = field(default_factory=list)

    def record(self, kind: str, fields: dict[str, JSONValue]) -> None:
        self.events.append((kind, dict(fields)))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]
