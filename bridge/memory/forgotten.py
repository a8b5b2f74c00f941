"""What a player forgot while a turn of theirs was still running.

A private turn is indexed for recall when it ends (`bridge.memory.conversations`). A player who
forgets a memory, or everything, while a turn that says those words is still being answered
would find the turn indexed after the forget: recall would bring back what was forgotten. So
the store notes each forget here for a while (`KEEP`), and an entry of a turn that started
before a forget is checked against it before it is indexed: after ``forget all`` it is not
indexed at all; after one memory's forget, not when it holds the share of that memory's words
that ``forget`` itself takes (`MENTION_SHARE`). In this process only: a forget on another
bridge of a network is not seen here.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bridge.memory.query import terms_of, words_of

MENTION_SHARE = 0.5
"""The share of a forgotten memory's words an entry must hold to be one that said it."""
KEEP = timedelta(hours=1)
"""How long a forget is remembered: longer than any turn runs."""
MAX_TEXTS = 64
"""Forgotten texts kept per player at most (the oldest go first)."""


def mentions(text: str, entry_text: str, share: float = MENTION_SHARE) -> bool:
    """Whether ``entry_text`` holds at least ``share`` of the words of ``text``."""
    terms = terms_of(text)
    if not terms:
        return False
    words = set(words_of(entry_text))
    return sum(1 for term in terms if term in words) / len(terms) >= share


@dataclass(slots=True)
class _Forgets:
    everything_at: datetime | None = None
    texts: deque[tuple[datetime, str]] = field(default_factory=lambda: deque(maxlen=MAX_TEXTS))


class RecentlyForgotten:
    """The forgets of the last `KEEP`, per player; thread-safe (the store runs in workers)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_owner: dict[str, _Forgets] = {}

    def forgot(self, owner_uuid: str, text: str, at: datetime) -> None:
        with self._lock:
            self._prune(at)
            self._by_owner.setdefault(owner_uuid, _Forgets()).texts.append((at, text))

    def forgot_everything(self, owner_uuid: str, at: datetime) -> None:
        with self._lock:
            self._prune(at)
            self._by_owner.setdefault(owner_uuid, _Forgets()).everything_at = at

    def allows(self, owner_uuid: str, entry_text: str, started_at: datetime) -> bool:
        """Whether an entry of ``owner_uuid``'s turn that started at ``started_at`` may be
        indexed: nothing they forgot since holds it."""
        with self._lock:
            forgets = self._by_owner.get(owner_uuid)
            if forgets is None:
                return True
            if forgets.everything_at is not None and forgets.everything_at >= started_at:
                return False
            since = [text for at, text in forgets.texts if at >= started_at]
        return not any(mentions(text, entry_text) for text in since)

    def _prune(self, now: datetime) -> None:
        cutoff = now - KEEP
        for owner, forgets in list(self._by_owner.items()):
            while forgets.texts and forgets.texts[0][0] < cutoff:
                forgets.texts.popleft()
            if forgets.everything_at is not None and forgets.everything_at < cutoff:
                forgets.everything_at = None
            if not forgets.texts and forgets.everything_at is None:
                del self._by_owner[owner]
