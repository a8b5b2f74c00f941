"""The public session: one per server instance, a sequence of whole completed turns.

The state is an immutable value (`SessionState`); every change builds a new one and swaps a
single reference, so a reader holding a state sees it whole, and a compaction can tell that the
session changed while it was summarising by comparing identities (copy-on-write). Only whole
completed turns are ever added. Turns that a compaction summarised leave the live state (their
summary replaces them); the archive keeps them all.

Because a state is never changed in place, the last projection is kept with the state it was
made from: after a turn is published the compaction check projects the new state, and the next
turn's first request projects the same state again. Any change (a publish, a clear, a
compaction's swap) is a new state, so a kept projection can never be stale.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import chain

from bridge.providers.items import Item
from bridge.turns.tokens import TokenCalibration, raw_tokens, raw_tokens_of_text


def new_session_id() -> str:
    return "s-" + secrets.token_urlsafe(12)


@dataclass(frozen=True, slots=True)
class CompletedTurn:
    turn_id: str
    player: str
    items: tuple[Item, ...]
    raw_tokens: int = field(default=-1)

    def __post_init__(self) -> None:
        if self.raw_tokens < 0:
            object.__setattr__(self, "raw_tokens", raw_tokens(self.items))


@dataclass(frozen=True, slots=True)
class SessionState:
    session_id: str
    turns: tuple[CompletedTurn, ...] = ()
    summary: str | None = None

    @property
    def message_count(self) -> int:
        return sum(len(turn.items) for turn in self.turns)


@dataclass(frozen=True, slots=True)
class ContextProjection:
    """What a request replays of the session: the summary and the newest whole turns."""

    session_id: str
    summary: str | None
    items: tuple[Item, ...]
    raw_tokens: int


class PublicSession:
    def __init__(
        self,
        *,
        id_factory: Callable[[], str] = new_session_id,
        calibration: TokenCalibration | None = None,
    ) -> None:
        self._id_factory = id_factory
        self.calibration = calibration or TokenCalibration()
        self._state = SessionState(session_id=id_factory())
        # (state, max_messages, projection of that state) of the last projection made.
        self._projected: tuple[SessionState, int, ContextProjection] | None = None

    @property
    def state(self) -> SessionState:
        return self._state

    @property
    def session_id(self) -> str:
        return self._state.session_id

    def publish(self, turn: CompletedTurn, *, session_id: str) -> bool:
        """Append a completed turn to the session it started in; False if that session was
        cleared meanwhile (the turn then belongs to the archive only)."""
        state = self._state
        if state.session_id != session_id:
            return False
        self._state = replace(state, turns=(*state.turns, turn))
        return True

    def replace_if_unchanged(self, expected: SessionState, new: SessionState) -> bool:
        """Swap in `new` only if the state is still exactly `expected`."""
        if self._state is not expected:
            return False
        self._state = new
        return True

    def clear(self) -> str:
        """Start a new, empty session with a new id; returns the id."""
        self._state = SessionState(session_id=self._id_factory())
        return self._state.session_id

    def projection(self, max_messages: int) -> ContextProjection:
        """The summary plus the newest whole turns whose items fit in `max_messages`.

        Whole turns only, so a tool call is never replayed without its result. The newest
        turn is always included, even alone past the limit, so the model sees what it did last.
        """
        state = self._state
        kept = self._projected
        if kept is not None and kept[0] is state and kept[1] == max_messages:
            return kept[2]
        budget = max_messages - (1 if state.summary else 0)
        chosen: list[CompletedTurn] = []
        used = 0
        for turn in reversed(state.turns):
            if chosen and used + len(turn.items) > budget:
                break
            chosen.append(turn)
            used += len(turn.items)
        chosen.reverse()
        items = tuple(chain.from_iterable(turn.items for turn in chosen))
        tokens = sum(turn.raw_tokens for turn in chosen)
        if state.summary:
            tokens += raw_tokens_of_text(state.summary)
        projection = ContextProjection(state.session_id, state.summary, items, tokens)
        self._projected = (state, max_messages, projection)
        return projection

    def estimated_tokens(self, max_messages: int) -> int:
        """Calibrated token estimate of the current projection."""
        return self.calibration.calibrated(self.projection(max_messages).raw_tokens)
