"""The turn loop against a scripted model, recording tools, output and archive."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

import pytest

from bridge.errors import ProviderError, StoreError
from bridge.providers.events import Completed, TextDelta, Usage
from bridge.providers.items import AssistantText, PlayerMessage, ToolCall, ToolResult
from bridge.store.audit_sink import JSONValue, MemoryAudit
from bridge.turns.activity import BusyError
from bridge.turns.engine import TurnRequest
from bridge.turns.failure_lines import PROVIDER_FAILURE
from bridge.turns.listen import (
    OVERHEARD_HEADING,
    CarryLimits,
    ListenCarry,
    Overheard,
    OverheardLine,
)
from bridge.turns.ports import PlayerRef
from bridge.turns.request import LANGUAGE_RULE
from bridge.turns.tool_round import TOOL_CALL_LIMIT_OUTPUT

from .conftest import Harness, make_snapshot
from .fakes import (
    ALEX,
    STEVE,
    Pause,
    RecordingOutput,
    RecordingTools,
    ScriptedModel,
    answer,
    failure,
    tool_calls,
)


async def test_success_publishes_archives_and_replies(harness: Harness) -> None:
    model = ScriptedModel([answer("It is <gold>noon</gold>.", deltas=3)])
    outcome = await harness.run(make_snapshot(model), "what time is it")

    assert (outcome.status, outcome.reply) == ("completed", "It is <gold>noon</gold>.")
    assert harness.output.replies == [("Steve", "It is noon.")]  # style tags dropped
    expected_items = (
        PlayerMessage(player="Steve", text="what time is it"),
        AssistantText(text="It is <gold>noon</gold>."),
    )
    (turn,) = harness.session.state.turns
    assert (turn.turn_id, turn.items) == ("t1", expected_items)
    (archived,) = harness.archive.turns
    assert archived.session_id == "s1" and archived.player == "Steve"
    assert (archived.model_ref, archived.control_version) == ("local/model-a", "cp-1")
    assert archived.items == tuple(i.model_dump(mode="json") for i in expected_items)
    assert archived.started_at <= archived.ended_at
    (request,) = model.requests
    assert request.session_id == "s1"
    assert request.instructions == f"You are Mineclaw.\n\n{LANGUAGE_RULE}"
    assert request.items == expected_items[:1]
    assert harness.audit.kinds() == ["turn.start", "turn.end"]
    assert harness.audit.events[1][1]["outcome"] == "completed"
    assert not harness.activity.busy and not harness.engine.active


async def test_player_identity_and_history_reach_the_next_request(harness: Harness) -> None:
    model = ScriptedModel([answer("first"), answer("second")])
    await harness.run(make_snapshot(model), "one", STEVE)
    await harness.run(make_snapshot(model), "two", ALEX)
    assert model.requests[1].items == (
        PlayerMessage(player="Steve", text="one"),
        AssistantText(text="first"),
        PlayerMessage(player="Alex", text="two"),
    )
    dumped = repr(model.requests[1].model_dump())
    assert STEVE.uuid not in dumped and ALEX.uuid not in dumped


async def test_action_bar_is_throttled_capped_and_for_the_asker_only(harness: Harness) -> None:
    # The clock ticks 30 ms per read and frames need 75 ms: deltas 1, 4, 7 and 10 get one.
    text = "".join(f"word{n:02d} " for n in range(10))
    model = ScriptedModel([answer(text, deltas=10)])
    await harness.run(make_snapshot(model, action_bar_max_chars=20))
    frames = harness.output.action_bars
    assert len(frames) == 4
    assert {uuid for uuid, _ in frames} == {STEVE.uuid}
    assert frames[0][1] == "word00"
    assert all(len(frame) <= 20 for _, frame in frames)
    assert frames[-1][1].endswith("word09")


async def test_three_failures_drop_the_turn_and_change_nothing(harness: Harness) -> None:
    ok = ScriptedModel([answer("earlier answer")])
    await harness.run(make_snapshot(ok))
    state_before = harness.session.state
    archived_before = list(harness.archive.turns)

    model = ScriptedModel([failure("HTTP 503"), failure("HTTP 502"), failure("HTTP 500")])
    outcome = await harness.run(make_snapshot(model), "will this fail")

    assert (outcome.status, outcome.reason) == ("dropped", "HTTP 500")
    assert harness.session.state is state_before
    assert harness.archive.turns == archived_before
    assert len(model.requests) == 3
    # The default policy: jittered, never below 500 ms, each ceiling twice the last.
    first, second = harness.sleeps
    assert 0.5 <= first <= 1.0 and 0.5 <= second <= 2.0
    assert harness.output.replies == [("Steve", "earlier answer")]
    # The player gets the line for the failure's class in the bridge's words; the provider's
    # own text stays in the audit log.
    reason = {"reason": "the model provider's answer broke off"}
    assert harness.output.failures == [(STEVE.uuid, "errors.provider_busy", reason)]
    kinds = harness.audit.kinds()
    assert kinds[-5:] == ["turn.start", *["provider.failure"] * 3, "turn.end"]
    assert harness.audit.events[-1][1]["outcome"] == "dropped"
    assert not harness.activity.busy


async def test_two_failures_then_success_completes(harness: Harness) -> None:
    model = ScriptedModel([failure(), failure(), answer("third time lucky")])
    outcome = await harness.run(make_snapshot(model))
    assert outcome.reply == "third time lucky"
    assert harness.output.failures == []
    (turn,) = harness.session.state.turns
    assert turn.items[-1] == AssistantText(text="third time lucky")
    assert "partial text" not in repr(harness.archive.turns)


async def test_non_retryable_failure_is_not_attempted_again(harness: Harness) -> None:
    model = ScriptedModel([failure("HTTP 401 invalid_api_key", retryable=False)])
    outcome = await harness.run(make_snapshot(model))
    assert outcome.status == "dropped" and len(model.requests) == 1
    assert harness.sleeps == []


async def test_stream_without_final_event_counts_as_a_failed_attempt(harness: Harness) -> None:
    model = ScriptedModel([[TextDelta("cut off")], answer("complete")])
    outcome = await harness.run(make_snapshot(model))
    assert outcome.reply == "complete" and len(model.requests) == 2


async def test_client_raising_provider_error_is_a_final_failure(harness: Harness) -> None:
    model = ScriptedModel([[ProviderError("bad provider URL")]])
    outcome = await harness.run(make_snapshot(model))
    assert (outcome.status, outcome.reason) == ("dropped", "bad provider URL")


async def test_unexpected_bug_drops_the_turn_and_frees_the_server(harness: Harness) -> None:
    model = ScriptedModel([[RuntimeError("bug in a port")]])
    outcome = await harness.run(make_snapshot(model))
    assert (outcome.status, outcome.reason) == ("dropped", "internal error")
    assert harness.output.failures[0][1] == PROVIDER_FAILURE
    assert not harness.activity.busy
    assert (await harness.run(make_snapshot(ScriptedModel([answer("ok")])))).reply == "ok"


async def test_empty_answer_is_a_failure_not_a_silent_reply(harness: Harness) -> None:
    model = ScriptedModel([[Completed(items=())]])
    outcome = await harness.run(make_snapshot(model))
    assert outcome.status == "dropped" and harness.output.replies == []
    assert harness.session.state.turns == ()


async def test_tool_round_trip(harness: Harness) -> None:
    tools = RecordingTools()
    model = ScriptedModel(
        [
            tool_calls(("c1", "look", "{}"), ("c2", "run_command", '{"c":"time set day"}')),
            answer("Done."),
        ]
    )
    outcome = await harness.run(make_snapshot(model, runner=tools))
    assert outcome.reply == "Done."
    assert [name for _, name, _ in tools.calls] == ["look", "run_command"]
    assert [t.name for t in model.requests[0].tools] == ["look", "run_command"]
    second = model.requests[1].items
    assert second[1:] == (
        ToolCall(call_id="c1", name="look", arguments="{}"),
        ToolCall(call_id="c2", name="run_command", arguments='{"c":"time set day"}'),
        ToolResult(call_id="c1", output="ran look {}"),
        ToolResult(call_id="c2", output='ran run_command {"c":"time set day"}'),
    )
    assert len(harness.archive.turns[0].items) == 6
    assert harness.audit.kinds() == [
        "turn.start",
        "tool.call",
        "tool.result",
        "tool.call",
        "tool.result",
        "turn.end",
    ]


async def test_refused_tool_becomes_an_error_result(harness: Harness) -> None:
    tools = RecordingTools(refuse=frozenset({"run_command"}))
    model = ScriptedModel([tool_calls(("c1", "run_command", "{}")), answer("I may not.")])
    outcome = await harness.run(make_snapshot(model, runner=tools))
    assert outcome.reply == "I may not."
    result = model.requests[1].items[-1]
    assert isinstance(result, ToolResult) and result.output.startswith("error: run_command")
    assert "tool.failure" in harness.audit.kinds()


async def test_side_effect_then_provider_failure_is_not_retried(harness: Harness) -> None:
    tools = RecordingTools()
    model = ScriptedModel(
        [tool_calls(("c1", "run_command", "{}")), failure(), failure(), failure()]
    )
    outcome = await harness.run(make_snapshot(model, runner=tools))
    assert outcome.status == "dropped"
    assert len(tools.calls) == 1
    assert harness.session.state.turns == () and harness.archive.turns == []
    assert harness.audit.kinds().count("tool.call") == 1


async def test_round_limit_then_final_request_with_tool_choice_none(harness: Harness) -> None:
    tools = RecordingTools()
    model = ScriptedModel(
        [tool_calls(("a", "look", "{}")), tool_calls(("b", "look", "{}")), answer("enough")]
    )
    outcome = await harness.run(make_snapshot(model, runner=tools, max_tool_rounds=2))
    assert outcome.reply == "enough"
    # Past the limits the same tools are listed (the request's start stays cacheable), with
    # tool_choice "none".
    assert [len(r.tools) for r in model.requests] == [2, 2, 2]
    assert [r.tool_choice for r in model.requests] == ["auto", "auto", "none"]


async def test_model_insisting_on_tools_past_the_limit_drops_the_turn(harness: Harness) -> None:
    tools = RecordingTools()
    model = ScriptedModel([tool_calls(("a", "look", "{}")), tool_calls(("b", "look", "{}"))])
    outcome = await harness.run(make_snapshot(model, runner=tools, max_tool_rounds=1))
    assert outcome.status == "dropped" and "limits" in (outcome.reason or "")
    assert len(tools.calls) == 1 and harness.session.state.turns == ()


async def test_call_limit_answers_extra_calls_without_running_them(harness: Harness) -> None:
    tools = RecordingTools()
    model = ScriptedModel(
        [
            tool_calls(("a", "look", "1"), ("b", "look", "2")),
            tool_calls(("c", "look", "3"), ("d", "look", "4")),
            answer("ok"),
        ]
    )
    await harness.run(make_snapshot(model, runner=tools, max_tool_calls=3))
    assert [args for _, _, args in tools.calls] == ["1", "2", "3"]
    assert model.requests[2].items[-1] == ToolResult(call_id="d", output=TOOL_CALL_LIMIT_OUTPUT)
    assert model.requests[2].tool_choice == "none"
    assert model.requests[2].tools == model.requests[0].tools


async def test_stop_mid_stream_publishes_nothing(harness: Harness) -> None:
    pause = Pause()
    model = ScriptedModel([[TextDelta("thinking about it"), pause, *answer("never sent")]])
    task = harness.engine.start(TurnRequest(STEVE, "long one"), make_snapshot(model))
    await asyncio.wait_for(pause.reached.wait(), timeout=10)
    assert harness.activity.busy
    assert harness.engine.stop()
    outcome = await asyncio.wait_for(task, timeout=10)
    assert outcome.status == "stopped"
    assert harness.session.state.turns == () and harness.archive.turns == []
    assert harness.output.replies == [] and model.closed == 1
    # The provider served the request: its prompt and what streamed are counted, estimated.
    ended = harness.audit.events[-1]
    assert ended[0] == "turn.end" and ended[1]["outcome"] == "stopped"
    assert ended[1]["tokens"] == ended[1]["estimated_tokens"] > 0
    assert not harness.activity.busy and not harness.engine.stop()


async def test_stop_before_the_turn_ran_at_all_frees_the_server(harness: Harness) -> None:
    model = ScriptedModel([answer("never")])
    task = harness.engine.start(TurnRequest(STEVE, "x"), make_snapshot(model))
    assert harness.engine.stop()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=10)
    assert not harness.activity.busy and not harness.engine.active
    assert model.requests == [] and harness.session.state.turns == ()
    assert [kind for kind, _ in harness.audit.events] == ["turn.start", "turn.end"]
    assert harness.audit.events[-1][1]["outcome"] == "stopped"


async def test_outside_cancellation_during_commit_finishes_the_commit(harness: Harness) -> None:
    release = asyncio.Event()
    reached = asyncio.Event()

    class SlowOutput(RecordingOutput):
        async def reply(self, player: PlayerRef, lines: Sequence[str]) -> None:
            reached.set()
            await release.wait()

    harness.engine._output = SlowOutput()
    task = harness.engine.start(
        TurnRequest(STEVE, "x"), make_snapshot(ScriptedModel([answer("y")]))
    )
    await asyncio.wait_for(reached.wait(), timeout=10)
    assert not harness.engine.stop()  # committing: /mineclaw stop no longer applies
    task.cancel()
    assert harness.activity.busy  # still committing
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=10)
    assert len(harness.session.state.turns) == 1 and len(harness.archive.turns) == 1
    assert [e[1]["outcome"] for e in harness.audit.events if e[0] == "turn.end"] == ["completed"]
    assert not harness.activity.busy


async def test_stop_during_a_tool_run_keeps_the_tool_in_the_audit(harness: Harness) -> None:
    pause = Pause()

    class SlowTools(RecordingTools):
        async def run(self, call: ToolCall, context: object) -> ToolResult:
            self.calls.append(("", call.name, call.arguments))
            pause.reached.set()
            await pause.release.wait()
            raise AssertionError("not reached")

    model = ScriptedModel([tool_calls(("a", "run_command", "{}"))])
    snapshot = make_snapshot(model, runner=SlowTools())
    task = harness.engine.start(TurnRequest(STEVE, "go"), snapshot)
    await asyncio.wait_for(pause.reached.wait(), timeout=10)
    harness.engine.stop()
    assert (await asyncio.wait_for(task, timeout=10)).status == "stopped"
    assert harness.audit.kinds() == ["turn.start", "tool.call", "turn.end"]


async def test_outside_cancellation_propagates_and_frees_the_server(harness: Harness) -> None:
    pause = Pause()
    model = ScriptedModel([[pause]])
    task = harness.engine.start(TurnRequest(STEVE, "x"), make_snapshot(model))
    await asyncio.wait_for(pause.reached.wait(), timeout=10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=10)
    assert not harness.activity.busy and harness.session.state.turns == ()


async def test_one_turn_at_a_time(harness: Harness) -> None:
    pause = Pause()
    model = ScriptedModel([[pause, *answer("first")], answer("second")])
    task = harness.engine.start(TurnRequest(STEVE, "a"), make_snapshot(model))
    with pytest.raises(BusyError):
        harness.engine.start(TurnRequest(ALEX, "b"), make_snapshot(model))
    pause.release.set()
    assert (await asyncio.wait_for(task, timeout=10)).reply == "first"
    assert (await harness.run(make_snapshot(model), "b", ALEX)).reply == "second"


async def test_snapshot_is_fixed_for_the_whole_turn(harness: Harness) -> None:
    pause = Pause()
    tools = RecordingTools()
    old = ScriptedModel([tool_calls(("a", "look", "{}")), [pause, *answer("from old model")]])
    task = harness.engine.start(TurnRequest(STEVE, "x"), make_snapshot(old, runner=tools))
    await asyncio.wait_for(pause.reached.wait(), timeout=10)
    # A reload and a model switch now make a new snapshot; this turn must not see it.
    new = ScriptedModel([answer("from new model")])
    new_snapshot = make_snapshot(new, model_ref="other/model-b", control_version="cp-2")
    pause.release.set()
    assert (await asyncio.wait_for(task, timeout=10)).reply == "from old model"
    assert len(old.requests) == 2 and new.requests == []
    assert harness.archive.turns[0].model_ref == "local/model-a"
    assert harness.archive.turns[0].control_version == "cp-1"
    await harness.run(new_snapshot)
    assert harness.archive.turns[1].model_ref == "other/model-b"


async def test_reply_is_capped(harness: Harness) -> None:
    model = ScriptedModel([answer("x" * 500)])
    outcome = await harness.run(make_snapshot(model, reply_max_chars=100))
    assert outcome.reply == "x" * 99 + "…"
    assert harness.session.state.turns[0].items[-1] == AssistantText(text="x" * 500)


async def test_archive_failure_drops_the_turn(harness: Harness) -> None:
    harness.archive.fail = True
    outcome = await harness.run(make_snapshot(ScriptedModel([answer("lost")])))
    assert outcome.status == "dropped"
    assert harness.session.state.turns == () and harness.output.replies == []
    assert harness.output.failures[0][1] == PROVIDER_FAILURE


async def test_link_down_does_not_break_a_turn(harness: Harness) -> None:
    harness.output.link_down = True
    outcome = await harness.run(make_snapshot(ScriptedModel([answer("into the void", deltas=4)])))
    assert outcome.status == "completed"
    assert len(harness.session.state.turns) == 1 and len(harness.archive.turns) == 1


async def test_clear_mid_turn_archives_but_does_not_publish(harness: Harness) -> None:
    pause = Pause()
    model = ScriptedModel([[pause, *answer("old session answer")]])
    task = harness.engine.start(TurnRequest(STEVE, "x"), make_snapshot(model))
    await asyncio.wait_for(pause.reached.wait(), timeout=10)
    assert harness.session.clear() == "s2"
    pause.release.set()
    assert (await asyncio.wait_for(task, timeout=10)).status == "completed"
    assert harness.session.state.turns == ()
    assert harness.archive.turns[0].session_id == "s1"


async def test_reported_usage_calibrates_the_estimate(harness: Harness) -> None:
    model = ScriptedModel([answer("ok", input_tokens=10_000)])
    await harness.run(make_snapshot(model))
    assert harness.session.calibration.factor > 1.5


async def test_usage_without_input_tokens_changes_nothing(harness: Harness) -> None:
    model = ScriptedModel([[Completed(items=(AssistantText(text="ok"),), usage=Usage())]])
    await harness.run(make_snapshot(model))
    assert harness.session.calibration.factor == 1.0


async def test_failing_audit_refuses_the_start_without_holding_the_server(
    harness: Harness,
) -> None:
    class BrokenAudit:
        def record(self, kind: str, fields: object) -> None:
            raise StoreError("audit log is closed")

    harness.engine._audit = BrokenAudit()
    model = ScriptedModel([answer("x")])
    with pytest.raises(StoreError, match="closed"):
        harness.engine.start(TurnRequest(STEVE, "x"), make_snapshot(model))
    assert not harness.activity.busy and model.requests == []


class _AuditFailingAfter(MemoryAudit):
    """Like the audit log once its writer has failed: records from `kind` on raise."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.failing = False

    def record(self, kind: str, fields: Mapping[str, JSONValue]) -> None:
        self.failing = self.failing or kind == self.kind
        if self.failing:
            raise StoreError("audit writer failed: disk I/O error")
        super().record(kind, fields)


async def test_audit_failing_at_the_end_of_a_turn_still_sends_the_reply(harness: Harness) -> None:
    harness.engine._audit = _AuditFailingAfter("turn.end")
    outcome = await harness.run(make_snapshot(ScriptedModel([answer("the answer")])))
    assert outcome.status == "completed"
    # Archived and published, so the player must see it: the session replays it from now on.
    assert len(harness.archive.turns) == 1 and len(harness.session.state.turns) == 1
    assert [text for _, text in harness.output.replies] == ["the answer"]
    assert not harness.activity.busy


async def test_audit_failing_mid_turn_drops_it_and_still_tells_the_player(
    harness: Harness,
) -> None:
    harness.engine._audit = _AuditFailingAfter("tool.call")
    tools = RecordingTools()
    model = ScriptedModel([tool_calls(("c1", "look", "{}")), answer("never")])
    outcome = await harness.run(make_snapshot(model, runner=tools))
    # No tool runs without its audit record; the turn is dropped and the player told.
    assert outcome.status == "dropped" and tools.calls == []
    assert [key for _, key, _ in harness.output.failures] == [PROVIDER_FAILURE]
    assert harness.session.state.turns == () and harness.archive.turns == []
    assert not harness.activity.busy


async def test_clear_before_the_first_step_keeps_the_turn_on_the_session_it_started_in(
    harness: Harness,
) -> None:
    model = ScriptedModel([answer("noted"), answer("it was x")])
    await harness.run(make_snapshot(model), "remember: the password is x")
    task = harness.engine.start(TurnRequest(STEVE, "what was it?"), make_snapshot(model))
    # A /mineclaw clear handled in the same loop pass, before the turn's first step.
    assert harness.session.clear() == "s2"
    assert (await asyncio.wait_for(task, timeout=10)).status == "completed"
    # The model saw the history and id of s1, the turn is filed under s1, and s2 stays empty.
    asked = model.requests[1]
    assert asked.session_id == "s1" and len(asked.items) == 3
    assert harness.archive.turns[1].session_id == "s1"
    assert harness.session.state.turns == ()


async def test_overheard_lines_enter_the_turn_before_the_question(harness: Harness) -> None:
    model = ScriptedModel([answer("Heard you both."), failure(retryable=False), answer("ok")])
    heard = Overheard()
    carry = ListenCarry(heard, lambda: CarryLimits(lines=20, chars=2000))
    harness.engine.overheard = carry
    heard.add("Alex", "nice base", CarryLimits(20, 2000))
    heard.add("Notch", "thanks", CarryLimits(20, 2000))
    await harness.run(make_snapshot(model), "what did they say?")
    expected = (
        PlayerMessage(player=None, text=OVERHEARD_HEADING),
        PlayerMessage(player="Alex", text="nice base"),
        PlayerMessage(player="Notch", text="thanks"),
        PlayerMessage(player="Steve", text="what did they say?"),
    )
    assert model.requests[0].items == expected
    # They are part of the completed turn: the session and the archive keep them.
    (turn,) = harness.session.state.turns
    assert turn.items[:4] == expected
    assert "nice base" in repr(harness.archive.turns[0].items)
    assert heard.lines == ()  # carried once

    # A turn that does not complete hands what it overheard on to the next one.
    heard.add("Alex", "are you there?", CarryLimits(20, 2000))
    assert (await harness.run(make_snapshot(model), "dropped")).status == "dropped"
    assert heard.lines == (OverheardLine("Alex", "are you there?"),)
    await harness.run(make_snapshot(model), "again")
    assert PlayerMessage(player="Alex", text="are you there?") in model.requests[-1].items
    assert heard.lines == ()
