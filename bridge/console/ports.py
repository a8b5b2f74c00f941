"""What the console needs from the running bridge, implemented by `bridge.app` (the console
sits below the wiring and never reaches into it).

The console runs in a process of its own (`bridge.app.console.console_process`); its
implementation (`bridge.console.remote_backend`) reads the folder and the store there and asks
the bridge for the rest over `bridge.console.channel`: a review (it republishes the served
configuration, so the next turn's Function menu offers what was just reviewed), forgetting a
memory, redeeming a login link, and the status of what runs now.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from bridge.control.plane import ControlPlane
from bridge.functions.review_state import ReviewBook
from bridge.memory.store import MemoryStore
from bridge.store.console_logins import Redeemed
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

    def accept_review(self, name: str, reviewer: str) -> None:
        """Review ``name``'s current source: stored, audited (``via: console``) and offered
        from the next turn on. Raises `KeyError` for an unknown Function, `MineclawError`."""
        ...

    def status(self) -> StatusView: ...

    @property
    def memories(self) -> MemoryStore | None:
        """The players' and the server's memories (None: memory is off)."""
        ...

    def forget_memory(self, memory_id: str, who: str) -> bool:
        """Delete one memory (the console holds every node, as in game), audited; False when
        there is none by that id. Raises `MineclawError`."""
        ...

    def redeem_login(self, token: str) -> Redeemed | None:
        """The role a one-time login link grants, marking it used; None when it is unknown,
        expired or used. Raises `MineclawError`."""
        ...
