"""The session keeps its last projection with the state it came from: reused while that state
stands, never after a publish, a clear, a compaction's swap or another message limit."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

from bridge.turns.session import (
    WINDOW_STEPS,
    CompletedTurn,
    ContextProjection,
    PublicSession,
    SessionState,
)
from bridge.turns.tokens import raw_tokens_of_text

from .test_session import simple_turn


def ids() -> PublicSession:
    counter = itertools.count(1)
    return PublicSession(id_factory=lambda: f"s{next(counter)}")


def fresh_projection(session: PublicSession, max_messages: int) -> ContextProjection:
    """The same state projected by a session that has kept nothing."""
    other = PublicSession(id_factory=lambda: session.session_id)
    assert other.replace_if_unchanged(other.state, session.state)
    return other.projection(max_messages)


def filled(turns: int) -> PublicSession:
    session = ids()
    for number in range(turns):
        assert session.publish(simple_turn(number, extra_items=1), session_id="s1")
    return session


def test_the_same_state_is_projected_once() -> None:
    session = filled(5)
    first = session.projection(8)
    assert session.projection(8) is first
    assert session.estimated_tokens(8) == session.calibration.calibrated(first.raw_tokens)
    assert first == fresh_projection(session, 8)


def test_a_publish_is_seen_by_the_next_projection() -> None:
    session = filled(5)
    before = session.projection(100)
    assert session.publish(simple_turn(99), session_id="s1")
    after = session.projection(100)
    assert after is not before
    assert after.items[-2:] == simple_turn(99).items
    assert after == fresh_projection(session, 100)


def test_a_clear_is_seen_by_the_next_projection() -> None:
    session = filled(3)
    assert session.projection(100).items
    new_id = session.clear()
    cleared = session.projection(100)
    assert cleared.items == () and cleared.session_id == new_id and cleared.raw_tokens == 0


def test_a_compaction_swap_is_seen_by_the_next_projection() -> None:
    session = filled(6)
    state = session.state
    before = session.projection(100)
    compacted = replace(state, turns=state.turns[-2:], summary="they talked about stone")
    assert session.replace_if_unchanged(state, compacted)
    after = session.projection(100)
    assert after.summary == "they talked about stone"
    assert len(after.items) == 8 and len(before.items) == 24
    assert after == fresh_projection(session, 100)


def test_another_message_limit_is_projected_anew() -> None:
    # A reload can change max_messages between two turns on the same state.
    session = filled(6)
    wide = session.projection(100)
    narrow = session.projection(8)
    assert len(wide.items) == 24 and len(narrow.items) == 8
    assert narrow == fresh_projection(session, 8)
    assert session.projection(100) == wide


def test_a_turn_published_in_another_session_leaves_the_projection_alone() -> None:
    session = filled(2)
    before = session.projection(100)
    late = CompletedTurn("t-late", "Alex", simple_turn(7).items)
    assert not session.publish(late, session_id="s-gone")
    assert session.projection(100) is before


def walked_projection(state: SessionState, max_messages: int) -> ContextProjection:
    """The projection by its definition, as a walk over the turns: the window's start is the
    overflow rounded up to a step of a quarter of the budget, at a turn boundary, never past
    the newest turn."""
    budget = max_messages - (1 if state.summary else 0)
    total = sum(len(turn.items) for turn in state.turns)
    start = 0
    if total > budget:
        step = max(1, budget // WINDOW_STEPS)
        start = -(-(total - budget) // step) * step
    chosen: list[CompletedTurn] = []
    position = 0
    for number, turn in enumerate(state.turns):
        if position >= start or number == len(state.turns) - 1:
            chosen.append(turn)
        position += len(turn.items)
    items = tuple(item for turn in chosen for item in turn.items)
    tokens = sum(turn.raw_tokens for turn in chosen)
    if state.summary:
        tokens += raw_tokens_of_text(state.summary)
    return ContextProjection(state.session_id, state.summary, items, tokens)


def test_indexed_projection_equals_the_walk_through_publishes_clears_and_swaps() -> None:
    rng = random.Random(7)
    session = ids()
    checked = longest = 0
    for step in range(1500):
        roll = rng.random()
        if roll < 0.02:
            session.clear()
        elif roll < 0.06 and session.state.turns:
            state = session.state
            keep = rng.randrange(len(state.turns) + 1)
            summary = rng.choice([None, "", "an earlier talk about stone"])
            compacted = replace(
                state, turns=state.turns[len(state.turns) - keep :], summary=summary
            )
            assert session.replace_if_unchanged(state, compacted)
        else:
            # Turns of 0 to 7 items, the empty one included (the walk stops at it only when
            # the budget is already spent).
            turn = simple_turn(step, extra_items=rng.randrange(0, 4))
            items = turn.items[: rng.choice([0, len(turn.items)])]
            done = CompletedTurn(turn.turn_id, "Steve", items)
            assert session.publish(done, session_id=session.session_id)
        for max_messages in (rng.randrange(0, 40), rng.randrange(0, 240)):
            assert session.projection(max_messages) == walked_projection(
                session.state, max_messages
            ), (step, max_messages)
            checked += 1
        longest = max(longest, len(session.state.turns))
    assert checked == 3000 and longest > 20
