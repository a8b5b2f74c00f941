"""Functions whose calls keep killing their worker are suspended for a while.

A call that ends with its worker process killed or crashed (a memory bomb, a runaway builtin,
a V8 fatal error) costs a process start, about half a CPU-second, besides the call itself. A
Function doing that on every call turns each call into such a cost, and a player (or a model
in a loop) can call it over and over. So the losses of each Function are counted over
`suspend_minutes`; the `suspend_after_losses`-th suspends it for `suspend_minutes`, during
which its calls are answered `function_suspended` without taking a worker.

A Function is known by its name and its source's hash: a reload that changes the source
(the owner fixed it) starts from nothing.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from dataclasses import dataclass

from bridge.control.function_limits import FunctionLimits


@dataclass(frozen=True)
class Suspension:
    """A Function just suspended: what the audit record and the operators' notice say."""

    function: str
    losses: int
    minutes: int


class Suspensions:
    """Counts each Function's lost workers; lives as long as the bridge (not per call)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._losses: dict[tuple[str, str | None], collections.deque[float]] = {}
        self._until: dict[tuple[str, str | None], float] = {}

    def remaining_s(self, function: str, source_sha256: str | None) -> float:
        """Seconds the Function stays suspended; 0 when it may run."""
        key = (function, source_sha256)
        until = self._until.get(key)
        if until is None:
            return 0.0
        left = until - self._clock()
        if left <= 0:
            del self._until[key]
            return 0.0
        return left

    def lost(
        self, function: str, source_sha256: str | None, limits: FunctionLimits
    ) -> Suspension | None:
        """A call of the Function lost its worker; the suspension when this one starts it."""
        key = (function, source_sha256)
        now = self._clock()
        window = limits.suspend_minutes * 60.0
        losses = self._losses.setdefault(key, collections.deque())
        losses.append(now)
        while losses and now - losses[0] > window:
            losses.popleft()
        if len(losses) < limits.suspend_after_losses or key in self._until:
            return None
        count = len(losses)
        losses.clear()
        self._until[key] = now + window
        return Suspension(function, count, limits.suspend_minutes)
