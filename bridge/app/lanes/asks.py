"""Questions the plugin keeps until they end (protocol 1.5, feature ``asks``).

A plugin announcing ``asks`` gives each wake (a prefixed ``chat`` line, an ``/ai`` question) an
id of its own and keeps the question until the bridge ends it: an ``output.chat`` carrying the
id (the answer or the line telling its asker why not) or the event ``ask.done``. A question
still kept when the link drops is sent again, once, to the bridge the plugin links to next
(``resent``), or its asker is told it was not delivered.

This book is how one bridge never answers a question twice: a question taken here (queued or
running) and sent again after the link came back is not started again (its turn's output goes
to the new link); one whose turn ended here while the link was down gets its lines sent again
from the book, then ``ask.done``. Another bridge's turn of the same question could not reach
the plugin once it linked elsewhere, and its archive write is fenced with the lease it lost.

The turn's id travels to the output in ``TURN_ASK``: set while a lane's engine starts the turn's
task, so the task (and the output it calls) sees it.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal

from bridge.link.messages import OutputChat
from bridge.link.protocol import ASKS_FEATURE

__all__ = ["ASKS_FEATURE", "TURN_ASK", "Ask", "AskBook"]

KEPT_S = 300.0
"""How long an ended question's lines are kept for a resend (the plugin resends only younger
questions)."""
KEPT_MAX = 4096


@dataclass(slots=True)
class Ask:
    """One question taken by this bridge."""

    id: str
    state: Literal["taken", "ended"] = "taken"
    frames: list[OutputChat] = field(default_factory=list)
    """The lines the turn sent to the plugin, each carrying the id."""
    sending: list[asyncio.Task[None]] = field(default_factory=list)
    """The tasks sending them (``ask.done`` goes after them)."""
    lost: bool = False
    """A line of it did not reach the plugin (the link dropped first): not ended here, so the
    plugin keeps it and sends it again, and its lines go again from the book."""
    ended_at: float | None = None
    cut: bool = False
    """Its turn was stopped because this bridge gave the server up: the plugin sends the
    question again to the next bridge, so this one neither ends it nor owes its asker a line."""


TURN_ASK: ContextVar[Ask | None] = ContextVar("turn_ask", default=None)
"""The question of the turn whose task is running (None: a turn without an id)."""


class AskBook:
    def __init__(self) -> None:
        self._asks: OrderedDict[str, Ask] = OrderedDict()
        self._clock = time.monotonic

    def get(self, ask_id: str) -> Ask | None:
        self._prune()
        return self._asks.get(ask_id)

    def take(self, ask_id: str) -> Ask:
        """The question is taken here (queued or started)."""
        self._prune()
        ask = Ask(ask_id)
        self._asks[ask_id] = ask
        self._asks.move_to_end(ask_id)
        while len(self._asks) > KEPT_MAX:
            self._asks.popitem(last=False)
        return ask

    def taken_ids(self) -> list[str]:
        """The questions taken here and not ended."""
        return [key for key, ask in self._asks.items() if ask.state == "taken"]

    def drop(self, ask_id: str) -> None:
        """Not taken after all (the line was full)."""
        self._asks.pop(ask_id, None)

    def ended(self, ask: Ask) -> None:
        ask.state = "ended"
        ask.ended_at = self._clock()

    def _prune(self) -> None:
        now = self._clock()
        stale = [
            key
            for key, ask in self._asks.items()
            if ask.ended_at is not None and now - ask.ended_at > KEPT_S
        ]
        for key in stale:
            del self._asks[key]


def tag(frames: tuple[OutputChat, ...]) -> tuple[OutputChat, ...]:
    """``frames`` carrying the running turn's question id (kept for a resend), or unchanged."""
    ask = TURN_ASK.get()
    if ask is None:
        return frames
    tagged = tuple(frame.model_copy(update={"ask": ask.id}) for frame in frames)
    ask.frames.extend(tagged)
    return tagged
