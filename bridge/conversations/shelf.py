"""The private conversations each player keeps, and which one their ``/ai`` questions go to.

A player's conversations have short ids they can type: ``1``, ``2``, ``3`` ... in the order they
were started, never reused after a delete (an id always names one conversation, so the archive
of a deleted one is never mistaken for a new one). Conversation ``1`` is the one every player
had before there were several: its lane is the player's plain private lane
(`bridge.turns.lanes.private_lane_id`), so a conversation held before an upgrade stays the
player's first. Conversation ``n`` runs in the lane ``<private lane>-<n>``: its own session,
archived and restored across restarts like any lane's.

Pure bookkeeping: no I/O here (`bridge.app.players.conversation_state` keeps it in a file).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

FIRST_ID = "1"
MAX_TITLE_CHARS = 48
MAX_ID = 1_000_000
"""Ids stop growing here (a player who deletes and starts conversations for ever)."""

CONVERSATION_ID = re.compile(r"[1-9][0-9]{0,6}")


class Conversation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=CONVERSATION_ID.pattern)
    title: str | None = Field(default=None, max_length=MAX_TITLE_CHARS)
    """None until the player names it or its first answered turn gives it one."""
    started: datetime
    last_active: datetime | None = None
    """When the player last asked in it (None: never)."""


class PlayerConversations(BaseModel):
    model_config = ConfigDict(extra="forbid")

    active: str = Field(pattern=CONVERSATION_ID.pattern)
    next_id: int = Field(ge=2, le=MAX_ID)
    conversations: list[Conversation] = Field(min_length=1, max_length=1000)


class LimitReached(Exception):
    """A player already keeps as many conversations as ``conversations.max_per_player``."""


def clean_title(text: str) -> str | None:
    """A title as shown: control and format characters dropped, white space collapsed, cut to
    `MAX_TITLE_CHARS` (None when nothing is left)."""
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in text
        if ch.isspace() or unicodedata.category(ch)[0] != "C"
    )
    words = " ".join(kept.split())
    if not words:
        return None
    if len(words) > MAX_TITLE_CHARS:
        words = words[: MAX_TITLE_CHARS - 1].rstrip() + "…"
    return words


def first(now: datetime) -> PlayerConversations:
    """What a player who never started a second conversation has: conversation 1, active."""
    return PlayerConversations(
        active=FIRST_ID, next_id=2, conversations=[Conversation(id=FIRST_ID, started=now)]
    )


class Shelf:
    """One player's conversations; every method changes ``state`` in place."""

    def __init__(self, state: PlayerConversations) -> None:
        self.state = state

    def find(self, conversation_id: str) -> Conversation | None:
        return next((c for c in self.state.conversations if c.id == conversation_id), None)

    @property
    def active(self) -> Conversation:
        found = self.find(self.state.active)
        assert found is not None  # every change keeps the active one on the shelf
        return found

    def newest_first(self) -> list[Conversation]:
        """The conversations, the one last asked in first (never-asked ones by their start)."""
        return sorted(
            self.state.conversations,
            key=lambda c: (c.last_active or c.started, int(c.id)),
            reverse=True,
        )

    def start(self, title: str | None, now: datetime, limit: int) -> Conversation:
        """A new conversation, made the active one. Raises `LimitReached`."""
        if len(self.state.conversations) >= limit:
            raise LimitReached
        conversation = self._new(title, now)
        self.state.active = conversation.id
        return conversation

    def switch(self, conversation_id: str) -> Conversation | None:
        found = self.find(conversation_id)
        if found is not None:
            self.state.active = found.id
        return found

    def rename(self, conversation_id: str, title: str) -> Conversation | None:
        found = self.find(conversation_id)
        if found is not None:
            found.title = clean_title(title)
        return found

    def delete(self, conversation_id: str, now: datetime) -> Conversation | None:
        """Take a conversation off the shelf. The active one gives way to the one last asked in
        (or to a new empty one when it was the last)."""
        found = self.find(conversation_id)
        if found is None:
            return None
        self.state.conversations.remove(found)
        if not self.state.conversations:
            self._new(None, now)
        if self.state.active == found.id:
            self.state.active = self.newest_first()[0].id
        return found

    def asked(self, now: datetime) -> Conversation:
        """The player asked in the active conversation: its last activity is now."""
        active = self.active
        active.last_active = now
        return active

    def titled(self, conversation_id: str, title: str) -> bool:
        """Give an untitled conversation its title (a player's own title is never replaced)."""
        found = self.find(conversation_id)
        cleaned = clean_title(title)
        if found is None or found.title is not None or cleaned is None:
            return False
        found.title = cleaned
        return True

    def _new(self, title: str | None, now: datetime) -> Conversation:
        number = self.state.next_id
        if self.find(str(number)) is not None:  # ids ran out at MAX_ID
            raise LimitReached
        self.state.next_id = min(number + 1, MAX_ID)
        conversation = Conversation(
            id=str(number), title=None if title is None else clean_title(title), started=now
        )
        self.state.conversations.append(conversation)
        return conversation


def lane_suffix(conversation_id: str) -> str:
    """What follows the player's private lane id in the lane of ``conversation_id``."""
    return "" if conversation_id == FIRST_ID else f"-{conversation_id}"


def shown_time(moment: datetime | None) -> str:
    """A last activity as ``/ai list`` shows it: UTC to the minute, ``-`` for never (the same
    in every locale)."""
    return "-" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
