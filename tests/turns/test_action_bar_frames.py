"""The asker's action bar: a thinking frame while the model reasons, ``◆ tool, tool ◆`` while
tools run (offered names only), and the last delta flushed when the stream is complete."""

from __future__ import annotations

import dataclasses

from bridge.providers.events import Completed, ReasoningDelta, TextDelta
from bridge.providers.items import AssistantText, ToolCall
from bridge.redaction import Redactor
from bridge.turns.tool_status import tool_status

from .conftest import LOOK, RUN, Harness, make_snapshot
from .fakes import RecordingTools, ScriptedModel, answer

THINKING = "reply.thinking {}"


def _calls(*names: str) -> list[ToolCall]:
    return [ToolCall(call_id=f"c{n}", name=name, arguments="{}") for n, name in enumerate(names)]


async def test_reasoning_shows_the_thinking_frame_before_the_text(harness: Harness) -> None:
    # The clock ticks 30 ms a read: four reasoning deltas fall within one 1.5 s refresh.
    reasoning = [ReasoningDelta("hmm ") for _ in range(4)]
    model = ScriptedModel([[*reasoning, *answer("The answer is here.")]])
    await harness.run(make_snapshot(model))
    assert harness.output.frames[0] == THINKING
    assert harness.output.frames.count(THINKING) == 1
    assert harness.output.frames[-1] == "The answer is here."
    assert "hmm" not in " ".join(harness.output.frames)  # reasoning text is never shown


async def test_long_reasoning_refreshes_the_thinking_frame(harness: Harness) -> None:
    harness.clock.step = 1.0  # a second between reads: every other delta refreshes it
    reasoning = [ReasoningDelta("...") for _ in range(6)]
    model = ScriptedModel([[*reasoning, *answer("Done.")]])
    await harness.run(make_snapshot(model))
    assert harness.output.frames.count(THINKING) == 3


async def test_the_last_delta_is_flushed(harness: Harness) -> None:
    # Two deltas 30 ms apart: the throttle (75 ms) holds the second back; and the first frame
    # only shows complete words. Without the flush the bar would end at "Hello".
    model = ScriptedModel([[TextDelta("Hello "), TextDelta("world"), *answer("Hello world")[-1:]]])
    await harness.run(make_snapshot(model))
    assert harness.output.frames == ["Hello", "Hello world"]


async def test_a_flush_shows_no_secret_that_a_frame_would_not(harness: Harness) -> None:
    key = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2"
    model = ScriptedModel([[TextDelta(f"key {key}"), Completed(items=(AssistantText(text=key),))]])
    await harness.run(make_snapshot(model))
    assert harness.output.frames and all(key not in frame for frame in harness.output.frames)


async def test_no_frame_shows_words_of_a_configured_passphrase(harness: Harness) -> None:
    # A four-word secret from .env streamed word by word, slow enough for a frame per word:
    # the first three words (a run of the passphrase) never reach the action bar.
    passphrase = "purple monkey dishwasher quartz"
    words = ["The ", "phrase ", "is ", "purple ", "monkey ", "dishwasher ", "quartz", " ok."]
    harness.clock.step = 1.0
    reply = "".join(words)
    model = ScriptedModel([[*(TextDelta(w) for w in words), *answer(reply)[-1:]]])
    snapshot = make_snapshot(model)
    snapshot = dataclasses.replace(snapshot, redactor=Redactor(secret_values=[passphrase]))
    await harness.run(snapshot)
    frames = harness.output.frames
    assert len(frames) >= 4
    for frame in frames:
        assert "purple" not in frame and "monkey" not in frame and "dishwasher" not in frame
    assert frames[-1] == "The phrase is [redacted: configured secret] ok."


async def test_tools_show_their_names_while_they_run(harness: Harness) -> None:
    tools = RecordingTools()
    first = Completed(items=tuple(_calls("look", "run_command", "look", "made_up<b>")))
    model = ScriptedModel([[first], answer("All set.")])
    await harness.run(make_snapshot(model, runner=tools))
    status = harness.output.status_lines
    assert [(key, values) for _, key, values in status] == [
        ("reply.tools", {"tools": "look, run_command"})
    ]
    assert harness.output.frames[-1] == "All set."


async def test_a_round_of_only_unknown_tools_shows_no_status(harness: Harness) -> None:
    tools = RecordingTools()
    model = ScriptedModel([[Completed(items=tuple(_calls("§cfake")))], answer("ok")])
    await harness.run(make_snapshot(model, runner=tools))
    assert harness.output.status_lines == []


def test_tool_status_is_bounded() -> None:
    offered = (LOOK, RUN)
    names = ("look", "run_command")
    assert tool_status(_calls(*names), offered, 120) == "look, run_command"
    assert tool_status(_calls(*names), offered, 8) == "look, r…"
    many = tuple(type(LOOK)(name=f"tool_{n}", description="") for n in range(7))
    shown = tool_status(_calls(*(spec.name for spec in many)), many, 120)
    assert shown == "tool_0, tool_1, tool_2, tool_3 +3"
