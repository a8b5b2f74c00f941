"""The one call path: validation, gating, cooldown, cancellation, errors and redaction."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest

from bridge.control.yaml_strict import load_strict_yaml
from bridge.errors import ToolError
from bridge.providers.items import ToolCall
from bridge.redaction import Redactor
from bridge.store.audit_sink import MemoryAudit
from bridge.tools import file_tools
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.registry import CallContext, HandlerFn, ToolRegistry
from bridge.tools.results import ErrorCode, ToolFailure, ToolOutcome
from bridge.tools.workspace import Workspace
from bridge.tools.workspace_paths import Budget
from bridge.turns.ports import PlayerRef, TurnContext

GITHUB_PAT = "ghp_" + "Q" * 36
STEVE = CallContext(turn_id="t1", call_id="c1", player_uuid="uuid-steve", player_name="Steve")
ALEX = CallContext(turn_id="t2", call_id="c2", player_uuid="uuid-alex", player_name="Alex")

TOOLS_YML = """\
schema: 1
tools:
  read:
    handler: read
    description: Read.
    parameters:
      type: object
      properties:
        path: {type: string, minLength: 1, maxLength: 16}
        offset: {type: integer, minimum: 0}
      required: [path]
      additionalProperties: false
  grep:
    handler: grep
    description: Search.
    parameters: {type: object, properties: {pattern: {type: string}}}
  run_command:
    handler: run_command
    description: Gated.
    permission: mineclaw.tool.run_command
    parameters: {type: object}
"""


class ManualClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _invoker(
    handlers: dict[str, HandlerFn],
    *,
    granted: frozenset[str] = frozenset(),
    cooldowns: Cooldowns | None = None,
    audit: MemoryAudit | None = None,
) -> ToolInvoker:
    document = load_strict_yaml(TOOLS_YML.encode(), "tools.yml")
    registry, _ = ToolRegistry.from_document(document, handlers)
    return ToolInvoker(
        registry.for_player(granted),
        cooldowns=cooldowns or Cooldowns(cooldown_ms=0),
        redactor=Redactor(),
        audit=audit if audit is not None else MemoryAudit(),
    )


def _returning(value: Any) -> HandlerFn:
    async def handler(arguments: dict[str, Any], context: CallContext) -> Any:
        return value

    return handler


def _raising(exc: BaseException) -> HandlerFn:
    async def handler(arguments: dict[str, Any], context: CallContext) -> Any:
        raise exc

    return handler


ECHO = _returning({"fine": True})


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("{}", "(arguments): 'path' is a required property"),
        ('{"path": 5}', "path: 5 is not of type 'string'"),
        ('{"path": ""}', "path: '' should be non-empty"),
        ('{"path": "' + "a" * 17 + '"}', "is too long"),
        ('{"path": "a", "offset": -1}', "offset: -1 is less than the minimum of 0"),
        ('{"path": "a", "follow_links": true}', "Additional properties are not allowed"),
        ('{"path": "a"', "arguments are not valid JSON"),
        ("[1, 2]", "arguments must be a JSON object"),
        ('"path"', "arguments must be a JSON object"),
        ("{" * 100_000, "over 65536 characters"),
        ("[" * 5000 + "]" * 5000, "not valid JSON"),
    ],
)
async def test_bad_arguments_come_back_as_a_clear_tool_error(arguments: str, expected: str) -> None:
    outcome = await _invoker({"read": ECHO}).invoke("read", arguments, STEVE)
    assert outcome.ok is False
    assert outcome.error_code is ErrorCode.INVALID_ARGUMENTS
    assert outcome.message is not None and expected in outcome.message


async def test_empty_argument_text_is_an_empty_object() -> None:
    outcome = await _invoker({"grep": ECHO}).invoke("grep", "", STEVE)
    assert outcome.ok and outcome.result == {"fine": True}


async def test_gated_and_missing_tools_get_the_same_answer() -> None:
    invoker = _invoker({"read": ECHO, "run_command": ECHO})
    gated = await invoker.invoke("run_command", "{}", STEVE)
    missing = await invoker.invoke("format_disk", "{}", STEVE)
    assert gated.error_code is missing.error_code is ErrorCode.UNKNOWN_TOOL
    assert gated.message == "no tool named 'run_command' is available in this turn"
    allowed = _invoker({"run_command": ECHO}, granted=frozenset({"mineclaw.tool.run_command"}))
    assert (await allowed.invoke("run_command", "{}", STEVE)).ok


async def test_cooldown_is_per_player_and_per_tool_with_an_injected_clock() -> None:
    clock = ManualClock()
    cooldowns = Cooldowns(cooldown_ms=500, clock=clock)
    invoker = _invoker({"read": ECHO, "grep": ECHO}, cooldowns=cooldowns)
    assert (await invoker.invoke("read", '{"path": "a"}', STEVE)).ok
    again = await invoker.invoke("read", '{"path": "a"}', STEVE)
    assert again.error_code is ErrorCode.COOLDOWN
    assert again.message is not None and "500 ms" in again.message
    assert (await invoker.invoke("read", '{"path": "a"}', ALEX)).ok  # another player
    assert (await invoker.invoke("grep", "{}", STEVE)).ok  # another tool
    clock.now += 0.3
    refused = await invoker.invoke("read", '{"path": "a"}', STEVE)
    assert refused.message is not None and "200 ms" in refused.message
    clock.now += 0.2
    assert (await invoker.invoke("read", '{"path": "a"}', STEVE)).ok


async def test_the_calls_of_one_reply_share_a_cooldown_and_the_next_round_waits() -> None:
    """ "Set day and clear the weather": two run_command calls of one model reply both run;
    the cooldown spaces that reply from the next round and from other turns."""
    clock = ManualClock()
    cooldowns = Cooldowns(cooldown_ms=500, clock=clock)
    granted = frozenset({"mineclaw.tool.run_command"})
    invoker = _invoker({"run_command": ECHO}, granted=granted, cooldowns=cooldowns)
    steve = PlayerRef(uuid="uuid-steve", name="Steve")
    round_one = TurnContext(turn_id="t1", session_id="s", player=steve, round=1)
    for call_id in ("a", "b", "c"):
        result = await invoker.run(
            ToolCall(call_id=call_id, name="run_command", arguments="{}"), round_one
        )
        assert json.loads(result.output)["ok"] is True, result.output
    round_two = TurnContext(turn_id="t1", session_id="s", player=steve, round=2)
    refused = await invoker.run(
        ToolCall(call_id="d", name="run_command", arguments="{}"), round_two
    )
    assert json.loads(refused.output)["error_code"] == "cooldown"
    other_turn = TurnContext(turn_id="t2", session_id="s", player=steve, round=1)
    refused = await invoker.run(
        ToolCall(call_id="e", name="run_command", arguments="{}"), other_turn
    )
    assert json.loads(refused.output)["error_code"] == "cooldown"
    # A call made on its own (the CLI, a Function) has no reply to share.
    alone = await invoker.invoke("run_command", "{}", STEVE)
    assert alone.error_code is ErrorCode.COOLDOWN
    clock.now += 0.5
    assert json.loads(
        (
            await invoker.run(ToolCall(call_id="f", name="run_command", arguments="{}"), round_two)
        ).output
    )["ok"]


async def test_a_reply_refused_by_the_cooldown_is_refused_for_every_call() -> None:
    clock = ManualClock()
    cooldowns = Cooldowns(cooldown_ms=500, clock=clock)
    invoker = _invoker({"read": ECHO}, cooldowns=cooldowns)
    assert (await invoker.invoke("read", '{"path": "a"}', STEVE)).ok
    steve = PlayerRef(uuid="uuid-steve", name="Steve")
    context = TurnContext(turn_id="t9", session_id="s", player=steve, round=1)
    for call_id in ("a", "b"):
        call = ToolCall(call_id=call_id, name="read", arguments='{"path": "a"}')
        assert json.loads((await invoker.run(call, context)).output)["error_code"] == "cooldown"


def test_reads_are_side_effect_free_and_commands_are_not() -> None:
    granted = frozenset({"mineclaw.tool.run_command"})
    invoker = _invoker({"read": ECHO, "grep": ECHO, "run_command": ECHO}, granted=granted)
    assert invoker.side_effect_free("read") and invoker.side_effect_free("grep")
    assert not invoker.side_effect_free("run_command")
    assert invoker.side_effect_free("no_such_tool")  # answered at once with an error


async def test_a_refused_call_does_not_start_the_cooldown() -> None:
    cooldowns = Cooldowns(cooldown_ms=500, clock=ManualClock())
    invoker = _invoker({"read": ECHO}, cooldowns=cooldowns)
    bad = await invoker.invoke("read", "{}", STEVE)
    assert bad.error_code is ErrorCode.INVALID_ARGUMENTS
    assert (await invoker.invoke("read", '{"path": "a"}', STEVE)).ok


@pytest.mark.parametrize(
    ("exc", "code", "message"),
    [
        (ToolFailure(ErrorCode.NOT_FOUND, "'x' does not exist"), "not_found", "'x' does not exist"),
        (ToolError("the link is down"), "internal_error", "the link is down"),
        (RuntimeError("/srv/private/path exploded"), "internal_error", "read failed unexpectedly"),
        (KeyError("k"), "internal_error", "read failed unexpectedly"),
    ],
)
async def test_handler_exceptions_become_error_results(
    exc: Exception, code: str, message: str, caplog: pytest.LogCaptureFixture
) -> None:
    outcome = await _invoker({"read": _raising(exc)}).invoke("read", '{"path": "a"}', STEVE)
    assert (outcome.ok, outcome.error_code, outcome.message) == (False, code, message)
    assert "/srv/private" not in outcome.to_json()


async def test_results_and_error_messages_are_redacted() -> None:
    invoker = _invoker(
        {
            "read": _returning({"text": f"GH_TOKEN={GITHUB_PAT}", "n": 3}),
            "grep": _raising(ToolFailure(ErrorCode.NOT_FOUND, f"no {GITHUB_PAT}")),
        }
    )
    read = await invoker.invoke("read", '{"path": "a"}', STEVE)
    assert read.result == {"text": "GH_TOKEN=[redacted: github token]", "n": 3}
    grep = await invoker.invoke("grep", "{}", STEVE)
    assert grep.message == "no [redacted: github token]"


async def test_cancelling_the_turn_cancels_the_call_and_is_audited() -> None:
    reached = asyncio.Event()

    async def stuck(arguments: dict[str, Any], context: CallContext) -> Any:
        reached.set()
        await asyncio.Event().wait()

    audit = MemoryAudit()
    invoker = _invoker({"read": stuck}, audit=audit)
    task = asyncio.create_task(invoker.invoke("read", '{"path": "a"}', STEVE))
    await asyncio.wait_for(reached.wait(), timeout=10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=10)
    assert audit.events[-1] == (
        "tool.invoke",
        {
            "turn_id": "t1",
            "call_id": "c1",
            "player": "Steve",
            "tool": "read",
            "handler": "read",
            "status": "cancelled",
        },
    )


async def test_cancelling_a_file_tool_stops_its_worker_thread(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = threading.Event()
    finished = threading.Event()
    seen: list[Budget] = []

    def endless_grep(pattern: str, path: str = "", *, budget: Budget) -> Any:
        seen.append(budget)
        started.set()
        while not budget.exhausted():
            budget.cancelled.wait(0.05)
        finished.set()
        return {}

    monkeypatch.setattr(workspace, "grep", endless_grep)
    monkeypatch.setattr(workspace, "budget", lambda: Budget.of(3600))
    handler = file_tools.workspace_handlers(workspace)["grep"]
    task = asyncio.create_task(handler({"pattern": "x"}, STEVE))
    assert await asyncio.to_thread(started.wait, 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=10)
    assert await asyncio.to_thread(finished.wait, 10)
    assert seen[0].cancelled.is_set()


async def test_run_speaks_the_turn_engine_port_and_audits() -> None:
    audit = MemoryAudit()
    invoker = _invoker({"read": _returning({"text": "hello"})}, audit=audit)
    call = ToolCall(call_id="call-9", name="read", arguments='{"path": "a"}')
    context = TurnContext(turn_id="t9", session_id="s", player=PlayerRef(uuid="u", name="Steve"))
    result = await invoker.run(call, context)
    assert result.call_id == "call-9"
    assert json.loads(result.output) == {"tool": "read", "ok": True, "result": {"text": "hello"}}
    assert audit.events == [
        (
            "tool.invoke",
            {
                "turn_id": "t9",
                "call_id": "call-9",
                "player": "Steve",
                "tool": "read",
                "handler": "read",
                "status": "ok",
            },
        )
    ]


async def test_handler_arguments_are_checked_even_under_a_loosened_schema(
    workspace: Workspace,
) -> None:
    # The owner's grep schema here accepts anything; the handler still wants a string pattern.
    invoker = _invoker(file_tools.workspace_handlers(workspace))
    outcome = await invoker.invoke("grep", '{"pattern": 7}', STEVE)
    assert outcome.error_code is ErrorCode.INVALID_ARGUMENTS
    assert outcome.message is not None and outcome.message.startswith("pattern:")


def test_outcome_shape_is_consistent() -> None:
    with pytest.raises(ValueError):
        ToolOutcome(tool="x", ok=True, error_code=ErrorCode.TIMEOUT, message="m")
    with pytest.raises(ValueError):
        ToolOutcome(tool="x", ok=False)
    failure = ToolOutcome.failure("x", ErrorCode.TIMEOUT, "slow")
    assert json.loads(failure.to_json()) == {
        "tool": "x",
        "ok": False,
        "error_code": "timeout",
        "message": "slow",
    }
