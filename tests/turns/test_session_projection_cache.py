"""The session keeps its last projection with the state it came from: reused while that state
stands, never after a publish, a clear, a compaction's swap or another message limit."""

from __future__ import annotations

import itertools
from dataclasses import replace

from bridge.turns.session import CompletedTurn, ContextProjection, PublicSession

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
