"""The public session: one per server instance, a sequence of whole completed turns.

The state is an immutable value (`SessionState`); every change builds a new one and swaps a
single reference, so a reader holding a state sees it whole, and a compaction can tell that the
session changed while it was summarising by comparing identities (copy-on-write). Only whole
completed turns are ever added. Turns that a compaction summarised leave the live state (their
summary replaces them); the archive keeps them all.

Because a state is never changed in place, what is derived from one is kept with it (and found
by identity, so it can never be stale: a publish, a clear or a compaction's swap is a new
state). An index lays every item of the state's turns out in one tuple with running counts at
the turn boundaries; a publish extends it by the new turn, so a projection is a search in the
counts and one slice instead of a walk over every turn of a full history. The last projection
is kept too: after a turn is published the compaction check projects the new state, and the
next turn's first request projects the same state again.

Tool results marked ``personal`` (snapshots of the asking player) belong to the player whose
turn made them: a projection for another player replays the call and a result that says it
was withheld, so Guest's request never carries Steve's position, health or items.
"""

from __future__ import annotations

import json
import secrets
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate, chain

from bridge.providers.items import Item, ToolResult
from bridge.turns.tokens import TokenCalibration, raw_tokens, raw_tokens_of_text


def new_session_id() -> str:
    return "s-" + secrets.token_urlsafe(12)


def withheld(result: ToolResult, owner: str) -> ToolResult:
    """What another player's turn sees of a personal result: that the tool ran, not its output."""
    note = f"withheld: this result was about {owner} and is shown only in {owner}'s turns"
    output = json.dumps({"ok": True, "result": {"withheld": note}})
    return ToolResult(call_id=result.call_id, output=output, personal=True)


def _has_personal(turn: CompletedTurn) -> bool:
    return any(isinstance(item, ToolResult) and item.personal for item in turn.items)


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


@dataclass(frozen=True, slots=True)
class _TurnIndex:
    """The items of `state`'s turns in one tuple; ``item_ends[i]`` and ``token_ends[i]`` count
    the items and raw tokens of ``state.turns[:i]``."""

    state: SessionState
    items: tuple[Item, ...]
    item_ends: tuple[int, ...]
    token_ends: tuple[int, ...]
    personal_turns: tuple[int, ...] = ()
    """Positions of the turns that hold a personal tool result."""

    @classmethod
    def of(cls, state: SessionState) -> _TurnIndex:
        turns = state.turns
        return cls(
            state,
            tuple(chain.from_iterable(turn.items for turn in turns)),
            tuple(accumulate((len(turn.items) for turn in turns), initial=0)),
            tuple(accumulate((turn.raw_tokens for turn in turns), initial=0)),
            tuple(n for n, turn in enumerate(turns) if _has_personal(turn)),
        )

    def extended(self, state: SessionState, turn: CompletedTurn) -> _TurnIndex:
        """The index of `state`, which is this index's state plus `turn`."""
        personal = self.personal_turns
        if _has_personal(turn):
            personal = (*personal, len(state.turns) - 1)
        return _TurnIndex(
            state,
            self.items + turn.items,
            (*self.item_ends, self.item_ends[-1] + len(turn.items)),
            (*self.token_ends, self.token_ends[-1] + turn.raw_tokens),
            personal,
        )


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
        # (state, max_messages, first turn replayed, projection) of the last projection made.
        self._projected: tuple[SessionState, int, int, ContextProjection] | None = None
        self._index: _TurnIndex | None = None

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
        new = SessionState(state.session_id, (*state.turns, turn), state.summary)
        self._index = self._index_of(state).extended(new, turn)
        self._swap(new)
        return True

    def replace_if_unchanged(self, expected: SessionState, new: SessionState) -> bool:
        """Swap in `new` only if the state is still exactly `expected`."""
        if self._state is not expected:
            return False
        self._swap(new)
        return True

    def clear(self) -> str:
        """Start a new, empty session with a new id; returns the id."""
        self._swap(SessionState(session_id=self._id_factory()))
        return self._state.session_id

    def _swap(self, new: SessionState) -> None:
        # What was derived from the old state goes with it, here and not at the next
        # projection: a cleared or compacted history is freed where it was dropped (freeing
        # a full one costs a turn's request a tenth of a millisecond).
        if self._index is not None and self._index.state is not new:
            self._index = None
        self._projected = None
        self._state = new

    def projection(self, max_messages: int, *, for_player: str | None = None) -> ContextProjection:
        """The summary plus the newest whole turns whose items fit in `max_messages`.

        Whole turns only, so a tool call is never replayed without its result. The newest
        turn is always included, even alone past the limit, so the model sees what it did last.
        For a turn of ``for_player``, personal tool results of other players' turns are
        withheld; without a player (token estimates) every item is counted as it is.
        """
        state = self._state
        first, projection = self._full_projection(state, max_messages)
        if for_player is None:
            return projection
        index = self._index_of(state)
        others = [
            n for n in index.personal_turns if n >= first and state.turns[n].player != for_player
        ]
        if not others:
            return projection
        items = list(projection.items)
        offset = index.item_ends[first]
        for n in others:
            turn = state.turns[n]
            start = index.item_ends[n] - offset
            for position, item in enumerate(turn.items, start):
                if isinstance(item, ToolResult) and item.personal:
                    items[position] = withheld(item, turn.player)
        return ContextProjection(
            state.session_id, state.summary, tuple(items), projection.raw_tokens
        )

    def _full_projection(
        self, state: SessionState, max_messages: int
    ) -> tuple[int, ContextProjection]:
        kept = self._projected
        if kept is not None and kept[0] is state and kept[1] == max_messages:
            return kept[2], kept[3]
        budget = max_messages - (1 if state.summary else 0)
        index = self._index_of(state)
        ends = index.item_ends
        # The oldest turn from which on the items fit: the first boundary with at most
        # `budget` items after it, but never past the newest turn (always replayed).
        first = bisect_left(ends, ends[-1] - budget, 0, max(len(state.turns) - 1, 0))
        items = index.items[ends[first] :]
        tokens = index.token_ends[-1] - index.token_ends[first]
        if state.summary:
            tokens += raw_tokens_of_text(state.summary)
        projection = ContextProjection(state.session_id, state.summary, items, tokens)
        self._projected = (state, max_messages, first, projection)
        return first, projection

    def _index_of(self, state: SessionState) -> _TurnIndex:
        index = self._index
        if index is None or index.state is not state:
            index = self._index = _TurnIndex.of(state)
        return index

    def estimated_tokens(self, max_messages: int) -> int:
        """Calibrated token estimate of the current projection."""
        return self.calibration.calibrated(self.projection(max_messages).raw_tokens)
