"""What the console needs from the running bridge, implemented by `bridge.app` (the console
sits below the wiring and never reaches into it).

Everything here is called from the console's own thread: reads of the plane and of the review
book are plain attribute reads; `accept_review` and `status` hand their work to the bridge as
the implementation sees fit (the review republishes the served configuration, so the next turn's
Function menu offers what was just reviewed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from bridge.control.plane import ControlPlane
from bridge.functions.review_state import ReviewBook
from bridge.memory.records import Memory
from bridge.memory.store import MemoryStore
from bridge.store.reviews import Review
from bridge.store.target import StorageTarget


@dataclass(frozen=True, slots=True)
class LinkedServer:
    server_id: str
    linked: bool
    platform: str | None = None


@dataclass(frozen=True, slots=True)
class StatusView:
    """The status page: what runs now and what the folder's verdict is."""

    servers: tuple[LinkedServer, ...]
    running_turns: int
    waiting: int
    providers: tuple[tuple[str, str], ...]
    """(provider id, ``reachable``, ``unreachable: <reason>`` or ``not configured (<why>)``)."""
    problems: tuple[str, ...] = field(default=())
    """The configuration's problems as ``validate`` shows them."""


class ConsoleBackend(Protocol):
    @property
    def config_dir(self) -> Path: ...

    @property
    def storage(self) -> StorageTarget:
        """Where the stores are: the console opens readers of its own there."""
        ...

    @property
    def reviews(self) -> ReviewBook: ...

    def plane(self) -> ControlPlane:
        """The control plane in force."""
        ...

    def accept_review(self, name: str, reviewer: str) -> Review:
        """Review ``name``'s current source: stored, audited (``via: console``) and offered
        from the next turn on. Raises `KeyError` for an unknown Function, `StoreError`."""
        ...

    def status(self) -> StatusView: ...

    @property
    def memories(self) -> MemoryStore | None:
        """The players' and the server's memories (None: memory is off)."""
        ...

    def forget_memory(self, memory_id: str, who: str) -> Memory | None:
        """Delete one memory (the console holds every node, as in game), audited; the memory
        deleted, or None when there is none by that id. Raises `StoreError`."""
        ...
