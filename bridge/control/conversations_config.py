"""``config.yml``'s ``conversations`` section: the private conversations a player may keep
(``/ai new``, `bridge.conversations`) and how their titles are made."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from bridge.control.base import StrictModel

DEFAULT_MAX_PER_PLAYER = 10


class ConversationsConfig(StrictModel):
    max_per_player: int = Field(default=DEFAULT_MAX_PER_PLAYER, ge=1, le=100)
    """How many private conversations one player may keep; ``/ai new`` past it is refused
    until they delete one. Lowering it deletes nothing."""
    titles: bool = False
    """Give an untitled conversation a title after its first answered turn (one short model
    request, billed to the server under ``conversation.title``). Off by default: the owner
    pays for every title."""
    title_model: str | None = Field(default=None, min_length=3, max_length=200)
    """``provider/model`` of ``providers.yml`` that makes the titles (a cheap one); None: the
    model in force."""

    @field_validator("title_model")
    @classmethod
    def _title_model(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[^/\s]+/\S+", value):
            raise ValueError("must be provider/model as in providers.yml")
        return value
