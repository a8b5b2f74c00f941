"""``config.yml``'s ``concurrency`` section: how many turns run at once and how many wait.

Each lane (the public session, and one private conversation per player, see ``/ai``) runs one
turn at a time; wakes that arrive while a lane is busy, or while the server already runs
``max_concurrent_turns`` turns, wait in that lane's first-in-first-out queue of at most
``queue_length`` wakes. Past the queue the wake is refused with ``gates.busy`` as before.
Both are read when a wake arrives, so a reload applies to the next one.
"""

from __future__ import annotations

from pydantic import Field

from bridge.control.base import StrictModel


class ConcurrencyConfig(StrictModel):
    """Turns at once over every lane, and wakes waiting per lane."""

    queue_length: int = Field(default=3, ge=0, le=32)
    max_concurrent_turns: int = Field(default=5, ge=1, le=64)
