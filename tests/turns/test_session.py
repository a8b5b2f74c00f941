"""The public session: publish, copy-on-write, clear, projection and token calibration."""

from __future__ import annotations

import itertools

from bridge.providers.items import AssistantText, PlayerMessage, ToolCall, ToolResult
from bridge.turns.session import CompletedTurn, PublicSession, SessionState
from bridge.turns.tokens import TokenCalibration, raw_tokens


def ids() -> PublicSession:
    counter = itertools.count(1)
    return PublicSession(id_factory=lambda: f"s{next(counter)}")


def simple_turn(n: int, extra_items: int = 0) -> CompletedTurn:
    items = [PlayerMessage(player="Steve", text=f"question {n}")]
    for k in range(extra_items):
        items.append(ToolCall(call_id=f"c{n}-{k}", name="look", arguments="{}"))
        items.append(ToolResult(call_id=f"c{n}-{k}", output="stone"))
    items.append(AssistantText(text=f"answer {n}"))
    return CompletedTurn(f"t{n}", "Steve", tuple(items))


def test_publish_appends_whole_turns_copy_on_write() -> None:
    session = ids()
    before = session.state
    assert session.publish(simple_turn(1), session_id="s1")
    after = session.state
    assert before.turns == () and before is not after
    assert [t.turn_id for t in after.turns] == ["t1"]
    assert after.message_count == 2


def test_publish_into_a_cleared_session_is_refused() -> None:
    session = ids()
    session.publish(simple_turn(1), session_id="s1")
    assert session.clear() == "s2"
    assert session.state == SessionState("s2")
    assert not session.publish(simple_turn(2), session_id="s1")
    assert session.state.turns == ()


def test_replace_if_unchanged_compares_identity() -> None:
    session = ids()
    seen = session.state
    session.publish(simple_turn(1), session_id="s1")
    assert not session.replace_if_unchanged(seen, SessionState("s1", summary="x"))
    current = session.state
    assert session.replace_if_unchanged(current, SessionState("s1", summary="x"))
    assert session.state.summary == "x"


def test_projection_keeps_newest_whole_turns_within_max_messages() -> None:
    session = ids()
    for n in range(1, 6):
        session.publish(simple_turn(n, extra_items=1), session_id="s1")  # 4 items each
    projection = session.projection(max_messages=9)
    assert projection.items == simple_turn(4, 1).items + simple_turn(5, 1).items
    assert projection.summary is None
    assert projection.raw_tokens == raw_tokens(projection.items)


def test_projection_counts_the_summary_as_a_message() -> None:
    session = ids()
    for n in range(1, 4):
        session.publish(simple_turn(n), session_id="s1")  # 2 items each
    session.replace_if_unchanged(
        session.state, SessionState("s1", session.state.turns, summary="they built a farm")
    )
    projection = session.projection(max_messages=5)
    assert projection.summary == "they built a farm"
    assert len(projection.items) == 4


def test_newest_turn_is_kept_even_past_the_limit() -> None:
    session = ids()
    session.publish(simple_turn(1), session_id="s1")
    session.publish(simple_turn(2, extra_items=5), session_id="s1")  # 12 items
    assert session.projection(max_messages=3).items == simple_turn(2, 5).items


def test_calibration_moves_towards_reported_usage_and_is_clamped() -> None:
    calibration = TokenCalibration()
    calibration.observe(raw_estimate=100, reported_input_tokens=200)
    assert 1.0 < calibration.factor < 2.0
    for _ in range(50):
        calibration.observe(raw_estimate=100, reported_input_tokens=200)
    assert abs(calibration.factor - 2.0) < 0.01
    assert calibration.calibrated(100) == 200
    for _ in range(50):
        calibration.observe(raw_estimate=1, reported_input_tokens=10_000)
    clamped = calibration.factor
    assert 3.99 < clamped <= 4.0
    calibration.observe(raw_estimate=0, reported_input_tokens=50)
    calibration.observe(raw_estimate=50, reported_input_tokens=0)
    assert calibration.factor == clamped


def test_session_estimate_uses_calibration() -> None:
    session = ids()
    session.publish(simple_turn(1), session_id="s1")
    raw = session.projection(240).raw_tokens
    assert session.estimated_tokens(240) == raw
    for _ in range(50):
        session.calibration.observe(raw_estimate=10, reported_input_tokens=30)
    assert session.estimated_tokens(240) == round(raw * session.calibration.factor)
    assert session.estimated_tokens(240) > 2 * raw


def test_the_replayed_window_moves_in_steps_so_the_start_stays_the_same() -> None:
    # Prompt caching matches the start of a request: dropping the oldest turn at every new one
    # would make every request of a full session start differently.
    session = ids()
    starts: list[str] = []
    for n in range(1, 61):
        session.publish(simple_turn(n), session_id="s1")  # 2 items each
        projection = session.projection(max_messages=40)
        assert len(projection.items) <= 40
        first = projection.items[0]
        assert isinstance(first, PlayerMessage)
        starts.append(first.text)
    changes = sum(1 for a, b in zip(starts, starts[1:], strict=False) if a != b)
    # 60 turns, 40 turns past the limit; steps of 10 items (5 turns): 8 moves, not 40.
    assert changes == 8
    # And never fewer than three quarters of the limit once it was reached.
    assert len(session.projection(max_messages=40).items) >= 30
