"""How long a turn may keep others waiting on confirmations.

A turn that waits on a confirmation holds its lane, and everyone waiting in that lane's line,
until the prompt is answered or expires. One confirmation's own timeout is the most that is
fair: while anyone waits behind the turn, every later prompt of the turn gets only what is left
of that window, and none once it is spent (the prompt is refused and the model answers without
it). A turn nobody waits behind is not bound here: its prompts keep their own timeouts.

The approval broker asks `allowed` before it opens a prompt of a turn and reports the time the
prompt was open with `waited`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

MAX_TURNS_KEPT = 1024
"""Turns whose confirmation time is remembered (a turn's prompts come while it runs)."""


class ConfirmationWindow:
    """``lane_of(turn_id)``: the lane running that turn (None when it runs no more);
    ``has_waiting(lane_id)``: whether anyone waits in that lane's line."""

    def __init__(
        self,
        *,
        window_s: float,
        lane_of: Callable[[str], str | None],
        has_waiting: Callable[[str], bool],
    ) -> None:
        self._window_s = window_s
        self._lane_of = lane_of
        self._has_waiting = has_waiting
        self._waited: OrderedDict[str, float] = OrderedDict()

    def allowed(self, turn_id: str) -> float | None:
        """Seconds the turn's next prompt may stay open; None: its own timeout."""
        lane = self._lane_of(turn_id)
        if lane is None or not self._has_waiting(lane):
            return None
        return max(0.0, self._window_s - self._waited.get(turn_id, 0.0))

    def waited(self, turn_id: str, seconds: float) -> None:
        self._waited[turn_id] = self._waited.get(turn_id, 0.0) + max(0.0, seconds)
        self._waited.move_to_end(turn_id)
        while len(self._waited) > MAX_TURNS_KEPT:
            self._waited.popitem(last=False)
