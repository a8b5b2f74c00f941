"""``config.yml``'s ``conversations`` section: the private conversations a player may keep
(``/ai new``, `bridge.conversations`)."""

from __future__ import annotations

from pydantic import Field

from bridge.control.base import StrictModel

DEFAULT_MAX_PER_PLAYER = 10


class ConversationsConfig(StrictModel):
    max_per_player: int = Field(default=DEFAULT_MAX_PER_PLAYER, ge=1, le=100)
    """How many private conversations one player may keep; ``/ai new`` past it is refused
    until they delete one. Lowering it deletes nothing."""
