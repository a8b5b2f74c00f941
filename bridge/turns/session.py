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

Tool results marked ``personal`` (snapshots of the asking player) are seen only by the turn
that made them: every later request replays the call and a result that says it was withheld,
so Guest's request never carries Steve's position, health or items. Steve's own later turns get
the same note (a snapshot is stale by the next turn anyway; the model may take a fresh one),
so the replayed history is the same bytes whoever asks, and a provider's prompt cache keeps
serving it as players take turns.

The replayed window moves in steps: once the history passes ``max_messages``, the oldest turns
are dropped a quarter of the limit at a time rather than one per turn, so the start of the
request (what prompt caching matches on) stays the same for many turns in a row.
"""

from __future__ import annotations

import json
import secrets
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, chain

from bridge.providers.items import Item, ToolResult
from bridge.turns.tokens import TokenCalibration, raw_tokens, raw_tokens_of_text


def new_session_id() -> str:
    return "s-" + secrets.token_urlsafe(12)


def withheld(result: ToolResult, owner: str) -> ToolResult:
    """What a later turn sees of a personal result: that the tool ran, not its output."""
    note = (
        f"withheld: this result was about {owner} and was shown only in the turn that asked"
        " for it; call the tool again for a fresh one"
    )
    output = json.dumps({"ok": True, "result": {"withheld": note}})
    return ToolResult(call_id=result.call_id, output=output, personal=True)


def holds_personal(items: Sequence[Item]) -> bool:
    """Whether ``items`` hold a personal tool result (one about, or for, the asker alone)."""
    return any(isinstance(item, ToolResult) and item.personal for item in items)


def _has_personal(turn: CompletedTurn) -> bool:
    return holds_personal(turn.items)


def replayed_items(turn: CompletedTurn) -> tuple[Item, ...]:
    """The turn's items as later requests replay them: personal results withheld."""
    if not _has_personal(turn):
        return turn.items
    return tuple(
        withheld(item, turn.player) if isinstance(item, ToolResult) and item.personal else item
        for item in turn.items
    )


WINDOW_STEPS = 4
"""The replayed window moves by ``max_messages // WINDOW_STEPS`` items at a time (at least one
whole turn), so the history replayed holds between three quarters of the limit and all of it."""


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
    """As replayed: personal results withheld (`replayed_items`)."""
    item_ends: tuple[int, ...]
    token_ends: tuple[int, ...]

    @classmethod
    def of(cls, state: SessionState) -> _TurnIndex:
        turns = state.turns
        return cls(
            state,
            tuple(chain.from_iterable(replayed_items(turn) for turn in turns)),
            tuple(accumulate((len(turn.items) for turn in turns), initial=0)),
            tuple(accumulate((turn.raw_tokens for turn in turns), initial=0)),
        )

    def extended(self, state: SessionState, turn: CompletedTurn) -> _TurnIndex:
        """The index of `state`, which is this index's state plus `turn`."""
        return _TurnIndex(
            state,
            self.items + replayed_items(turn),
            (*self.item_ends, self.item_ends[-1] + len(turn.items)),
            (*self.token_ends, self.token_ends[-1] + turn.raw_tokens),
        )


class PublicSession:
    def __init__(
        self,
        *,
        id_factory: Callable[[], str] = new_session_id,
        calibration: TokenCalibration | None = None,
        state: SessionState | None = None,
        on_new_session: Callable[[str], None] | None = None,
    ) -> None:
        """``state``: a session to go on with (restored after a restart); without one a new
        session starts. ``on_new_session`` is told the id of every session started here (the
        first, and each ``clear``) before it is used, so it can be recorded; if it raises,
        the session is not started (``clear`` leaves the old one in place)."""
        self._id_factory = id_factory
        self._on_new_session = on_new_session
        self.calibration = calibration or TokenCalibration()
        if state is None:
            state = SessionState(session_id=self._new_id())
        self._state = state
        # (state, max_messages, projection) of the last projection made.
        self._projected: tuple[SessionState, int, ContextProjection] | None = None
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
        self._swap(SessionState(session_id=self._new_id()))
        return self._state.session_id

    def _new_id(self) -> str:
        session_id = self._id_factory()
        if self._on_new_session is not None:
            self._on_new_session(session_id)
        return session_id

    def _swap(self, new: SessionState) -> None:
        # What was derived from the old state goes with it, here and not at the next
        # projection: a cleared or compacted history is freed where it was dropped (freeing
        # a full one costs a turn's request a tenth of a millisecond).
        if self._index is not None and self._index.state is not new:
            self._index = None
        self._projected = None
        self._state = new

    def projection(self, max_messages: int) -> ContextProjection:
        """The summary plus the newest whole turns whose items fit in `max_messages`.

        Whole turns only, so a tool call is never replayed without its result. The newest
        turn is always included, even alone past the limit, so the model sees what it did last.
        The oldest replayed turn moves in steps (`WINDOW_STEPS`), so consecutive requests
        start with the same bytes. Personal tool results are withheld (`replayed_items`).
        """
        state = self._state
        kept = self._projected
        if kept is not None and kept[0] is state and kept[1] == max_messages:
            return kept[2]
        budget = max_messages - (1 if state.summary else 0)
        index = self._index_of(state)
        ends = index.item_ends
        overflow = ends[-1] - budget
        start = 0
        if overflow > 0:
            step = max(1, budget // WINDOW_STEPS)
            start = -(-overflow // step) * step
        # The oldest turn starting at or after `start`, but never past the newest turn.
        first = bisect_left(ends, start, 0, max(len(state.turns) - 1, 0))
        items = index.items[ends[first] :]
        tokens = index.token_ends[-1] - index.token_ends[first]
        if state.summary:
            tokens += raw_tokens_of_text(state.summary)
        projection = ContextProjection(state.session_id, state.summary, items, tokens)
        self._projected = (state, max_messages, projection)
        return projection

    def _index_of(self, state: SessionState) -> _TurnIndex:
        index = self._index
        if index is None or index.state is not state:
            index = self._index = _TurnIndex.of(state)
        return index

    def estimated_tokens(self, max_messages: int) -> int:
        """Calibrated token estimate of the current projection."""
        return self.calibration.calibrated(self.projection(max_messages).raw_tokens)
