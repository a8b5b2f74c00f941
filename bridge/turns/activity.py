"""One thing at a time for the whole server: a turn or a compaction, never both.

The busy gate reads this, the engine holds it for a turn, the compactor for a compaction. It is
claimed synchronously (no await between check and claim), so two chat messages handled back to
back on the event loop cannot both start a turn.
"""

from __future__ import annotations

from typing import Literal

from bridge.errors import TurnError

ActivityKind = Literal["turn", "compaction"]


class BusyError(TurnError):
    """A turn or compaction was started while another one held the server."""


class ServerActivity:
    def __init__(self) -> None:
        self._current: ActivityKind | None = None

    @property
    def current(self) -> ActivityKind | None:
        return self._current

    @property
    def busy(self) -> bool:
        return self._current is not None

    def claim(self, kind: ActivityKind) -> None:
        if self._current is not None:
            raise BusyError(f"cannot start a {kind}: a {self._current} is running")
        self._current = kind

    def release(self, kind: ActivityKind) -> None:
        if self._current != kind:
            raise TurnError(f"release of a {kind} that is not running (current: {self._current})")
        self._current = None
