"""One memory as the bridge keeps it, and the words that name its kinds."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

Scope = Literal["personal", "server", "conversation"]
"""``personal``: one player's (their base, their wishes), recalled only in their own turns;
``server``: everyone's (rules, places, who is who); ``conversation``: an archived turn, owned
by the player of its private lane, or by nobody for a public turn
(`bridge.memory.conversations`)."""
SCOPES: tuple[Scope, ...] = ("personal", "server", "conversation")
MEMORY_SCOPES: tuple[Scope, ...] = ("personal", "server")
"""What automatic recall searches: memories, not earlier conversations."""

Source = Literal["tool", "workspace", "command", "archive"]
"""Who wrote it: the model through ``remember``, the owner in ``workspace/memory/*.md``, or a
command."""

SERVER_OWNER = ""
"""The owner column of a server memory: no player owns it."""

MAX_MEMORY_CHARS = 1000
"""The longest text one memory may hold."""


def new_memory_id() -> str:
    """A short random id (``m`` and eight characters): players type it in ``forget``, and it
    tells nothing of how many memories others have."""
    return "m" + secrets.token_hex(4)


@dataclass(frozen=True, slots=True)
class Memory:
    """One memory. ``owner_uuid`` is the player's UUID for a personal memory (a renamed
    player keeps theirs) and `SERVER_OWNER` for a server memory; ``owner_name`` is the name
    the player had when it was written, for listings only."""

    memory_id: str
    scope: Scope
    owner_uuid: str
    owner_name: str
    text: str
    source: Source
    created_at: datetime
    origin: str = ""
    """Where it came from: the lane of the turn that wrote it, or the workspace file."""
    shared: bool = False
    """A personal memory its owner shared (``/mineclaw memory share``): recalled into their
    public turns too. Unshared, it is never in a public turn's requests."""


@dataclass(frozen=True, slots=True)
class Found:
    """A memory a search found, with its score (higher is better; comparable within one
    search only)."""

    memory: Memory
    score: float
    similarity: float | None = None
    """The cosine similarity of its vector to the question's (None: found by keywords only)."""


SERVER_MEMORY_NODE = "mineclaw.memory.server"
"""The node a player needs for the model to write a server memory on their word."""
OTHERS_MEMORY_NODE = "mineclaw.memory.others"
"""The node an operator needs to list and purge another player's memories."""
