"""`LiveFunctionHost` over a real link: Functions in the real sandbox dispatch commands, call a
native tool and ask players through the approval broker; a scripted plugin answers."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionsFile
from bridge.control.messages_file import ApprovalMessages
from bridge.functions.engine import Engine
from bridge.functions.live_host import LiveFunctionHost
from bridge.functions.runtime import FunctionOutcome, FunctionRuntime
from bridge.tools.registry import CallContext

from .live_link import ALEX, SECRET_NAME, STEVE, WAIT_S, Live, live_link, tool_invoker
from .support import body, function

ALL = [
    "approval.request",
    "command.dispatch.console",
    "command.dispatch.player",
    "native_tool.call.online_players",
    "native_tool.call.nested",
]
# Every Function below reports a caught refusal as {status: "refused", output: {code}}.
CATCH = "} catch (e) { return {status: 'refused', output: {code: e.code, message: e.message}}; }"


def _runtime(
    live: Live,
    engine: Engine,
    *functions: dict[str, Any],
    never_opt_outs: frozenset[str] = frozenset(),
) -> FunctionRuntime:
    origin = CallContext(
        turn_id="turn-1", call_id="call-1", player_uuid=STEVE["uuid"], player_name="Steve"
    )
    host = LiveFunctionHost(
        plugin=live.plugin,
        broker=live.broker,
        tools=tool_invoker(live.plugin, live.audit),
        origin=origin,
        messages=ApprovalMessages,
        never_opt_outs=never_opt_outs,
    )
    catalogue = FunctionsFile.model_validate(
        {"schema": 1, "api_version": 1, "functions": list(functions)}
    )
    return FunctionRuntime(
        catalogue=catalogue, limits=FunctionLimits(), engine=engine, host=host, audit=live.audit
    )


def _dispatch(
    executor: str, command: str, player: str | None = None, *, name: str = "dispatch"
) -> dict[str, Any]:
    request = {"executor": executor, "command": command}
    if player is not None:
        request["player"] = player
    source = body(
        "try { const r = await api.invoke({action: 'command.dispatch', input: "
        + json.dumps(request)
        + "}); return {status: 'ok', output: r}; "
        + CATCH
    )
    return function(source, name=name, capabilities=ALL)


async def _call(runtime: FunctionRuntime, name: str, **arguments: Any) -> FunctionOutcome:
    return await asyncio.wait_for(runtime.invoke(name, arguments, player="Steve"), WAIT_S)


# ---- command.dispatch


async def test_console_dispatch_reports_dispatched_with_feedback_and_unknown_effect(
    engine: Engine,
) -> None:
    async with live_link() as live:
        plugin = await live.connect()
        runtime = _runtime(live, engine, _dispatch("console", "/give Steve bread 4"))
        outcome = await _call(runtime, "dispatch")
    assert outcome.result == {
        "status": "ok",
        "output": {
            "dispatch_status": "dispatched",
            "execution_result": "unknown",
            "feedback": ["Gave 4 bread"],
            "executor": "console",
            "player": None,
        },
    }
    # The leading slash is dropped: the link carries commands as the server dispatches them.
    assert plugin.sent("command.dispatch") == [
        {"executor": "console", "command": "give Steve bread 4"}
    ]


async def test_player_dispatch_resolves_name_or_uuid_and_has_no_feedback(engine: Engine) -> None:
    async with live_link() as live:
        plugin = await live.connect()
        by_name = _dispatch("player", "spawn", "Alex")
        by_uuid = _dispatch("player", "spawn", ALEX["uuid"].upper(), name="by-uuid")
        runtime = _runtime(live, engine, by_name, by_uuid)
        first = await _call(runtime, "dispatch")
        second = await _call(runtime, "by-uuid")
    for outcome in (first, second):
        assert outcome.result["output"]["dispatch_status"] == "dispatched"
        assert outcome.result["output"]["execution_result"] == "unknown"
        assert outcome.result["output"]["feedback"] == []
        assert outcome.result["output"]["player"] == "Alex"
    expected = {"executor": "player", "player": ALEX["uuid"], "command": "spawn"}
    assert plugin.sent("command.dispatch") == [expected, expected]


async def test_a_name_differing_in_case_is_offline_and_nothing_is_dispatched(
    engine: Engine,
) -> None:
    async with live_link() as live:
        plugin = await live.connect()
        runtime = _runtime(live, engine, _dispatch("player", "spawn", "alex"))
        outcome = await _call(runtime, "dispatch")
    assert outcome.result["status"] == "refused"
    assert outcome.result["output"]["code"] == "player_offline"
    assert plugin.sent("command.dispatch") == []
    assert outcome.operations[0].status == "failed"


async def test_rejected_by_the_server_is_not_dispatched(engine: Engine) -> None:
    async with live_link() as live:
        await live.connect(dispatch_answer={"dispatch_status": "rejected", "feedback": []})
        runtime = _runtime(live, engine, _dispatch("console", "nosuchcommand"))
        outcome = await _call(runtime, "dispatch")
    assert outcome.result["output"]["dispatch_status"] == "not_dispatched"
    assert outcome.result["output"]["execution_result"] == "failure"
    assert "effects_not_rolled_back" not in outcome.result["output"]


async def test_plugin_error_frames_become_catchable_codes(engine: Engine) -> None:
    cases = {
        "PLAYER_OFFLINE": "player_offline",
        "UNAVAILABLE": "link_down",
        "INTERNAL": "server_error",
    }
    async with live_link() as live:
        plugin = await live.connect()
        runtime = _runtime(live, engine, _dispatch("console", "say hi"))
        seen = {}
        for wire, _ in cases.items():
            plugin.dispatch_error = wire
            seen[wire] = (await _call(runtime, "dispatch")).result["output"]["code"]
    assert seen == cases


async def test_link_down_is_a_catchable_refusal(engine: Engine) -> None:
    async with live_link() as live:
        runtime = _runtime(live, engine, _dispatch("console", "say hi"))
        never_connected = await _call(runtime, "dispatch")
        plugin = await live.connect()
        await plugin.ws.close()
        await asyncio.wait_for(live.handler.down.wait(), WAIT_S)
        after_drop = await _call(runtime, "dispatch")
    for outcome in (never_connected, after_drop):
        assert outcome.result["status"] == "refused"
        assert outcome.result["output"]["code"] == "link_down"


async def test_bad_commands_are_refused_before_the_link(engine: Engine) -> None:
    async with live_link() as live:
        plugin = await live.connect()
        too_long = _dispatch("console", "say " + "x" * 300)
        broken = _dispatch("console", "say hi\nop Steve", name="broken")
        # A Hangul filler passes str.isprintable; it is refused by name all the same.
        hidden = _dispatch("console", "say hi\u3164there", name="hidden")
        runtime = _runtime(live, engine, too_long, broken, hidden)
        long_result = await _call(runtime, "dispatch")
        broken_result = await _call(runtime, "broken")
        hidden_result = await _call(runtime, "hidden")
    assert long_result.result["output"]["code"] == "invalid_input"
    assert "256" in long_result.result["output"]["message"]
    assert broken_result.result["output"]["code"] == "invalid_input"
    assert hidden_result.result["output"]["code"] == "invalid_input"
    assert "U+3164" in hidden_result.result["output"]["message"]
    assert plugin.sent("command.dispatch") == []


# ---- native_tool.call


async def test_native_tool_runs_over_the_link_redacted_and_audited(engine: Engine) -> None:
    source = body(
        "const r = await api.invoke({action: 'native_tool.call', "
        "input: {tool: 'online_players', arguments: {}}}); return {status: 'ok', output: r};"
    )
    async with live_link() as live:
        await live.connect(online=[STEVE, {"uuid": ALEX["uuid"], "name": SECRET_NAME}])
        runtime = _runtime(live, engine, function(source, name="who", capabilities=ALL))
        outcome = await _call(runtime, "who")
    output = outcome.result["output"]
    assert output["operation_status"] == "completed"
    text = json.dumps(output)
    assert "Steve" in text
    assert SECRET_NAME not in text
    tool_records = [fields for kind, fields in live.audit.events if kind == "tool.invoke"]
    assert [(r["tool"], r["status"], r["turn_id"]) for r in tool_records] == [
        ("online_players", "ok", "turn-1")
    ]
    assert str(tool_records[0]["call_id"]).startswith(f"call-1/{outcome.invocation_id}/")


async def test_native_tool_arguments_are_validated_like_a_model_call(engine: Engine) -> None:
    source = body(
        "const r = await api.invoke({action: 'native_tool.call', "
        "input: {tool: 'online_players', arguments: {everyone: true}}}); "
        "return {status: 'ok', output: r};"
    )
    async with live_link() as live:
        plugin = await live.connect()
        runtime = _runtime(live, engine, function(source, name="who", capabilities=ALL))
        outcome = await _call(runtime, "who")
    output = outcome.result["output"]
    assert output["operation_status"] == "not_performed"
    assert output["error_code"] == "invalid_arguments"
    assert plugin.sent("players.list") == []


async def test_call_function_under_another_name_is_unknown(engine: Engine) -> None:
    source = body(
        "try { await api.invoke({action: 'native_tool.call', "
        "input: {tool: 'nested', arguments: {}}}); return {status: 'ran', output: {}}; " + CATCH
    )
    async with live_link() as live:
        await live.connect()
        runtime = _runtime(live, engine, function(source, name="nest", capabilities=ALL))
        outcome = await _call(runtime, "nest")
    assert outcome.result["status"] == "refused"
    assert outcome.result["output"]["code"] == "unknown_tool"
    assert "'nested'" in outcome.result["output"]["message"]
    assert [kind for kind, _ in live.audit.events if kind == "tool.invoke"] == []


# ---- approval.request


def _ask(
    interaction: dict[str, Any], *, timeout_ms: int = 30_000, name: str = "ask"
) -> dict[str, Any]:
    """Asks `ctx.args.who`; on approval dispatches `say <choice or yes>` on the console."""
    request = json.dumps({"interaction": interaction, "timeout_ms": timeout_ms})
    source = body(
        f"const input = Object.assign({request}, {{player: ctx.args.who}});\n"
        "try {\n"
        "  const a = await api.invoke({action: 'approval.request', input});\n"
        "  if (a.approval_status !== 'approved') return {status: 'declined', output: a};\n"
        "  const d = await api.invoke({action: 'command.dispatch', input: {\n"
        "    executor: 'console', command: 'say ' + (a.choice || 'yes')}});\n"
        "  return {status: 'ok', output: {approval: a, dispatch: d}};\n" + CATCH
    )
    return function(source, name=name, capabilities=ALL)


CONFIRM = {"type": "confirm", "title": "Starter kit", "message": "Take <b>bread</b>?"}
SELECT = {
    "type": "select",
    "title": "Kit",
    "message": "Pick one",
    "options": [{"id": "bread", "label": "Bread"}, {"id": "stone", "label": "Stone"}],
}


async def _start(
    runtime: FunctionRuntime, who: str = "Steve", **kwargs: Any
) -> asyncio.Task[FunctionOutcome]:
    call = runtime.invoke("ask", {"who": who}, player="Steve", **kwargs)
    return asyncio.get_running_loop().create_task(asyncio.wait_for(call, WAIT_S))


async def test_confirm_approved_by_the_target_then_dispatched(engine: Engine) -> None:
    async with live_link() as live:
        plugin = await live.connect()
        task = await _start(_runtime(live, engine, _ask(CONFIRM)))
        shown = await asyncio.wait_for(plugin.prompts.get(), WAIT_S)
        # Someone else's click is refused and leaves the prompt open for Steve.
        await plugin.click(ALEX, "approve", shown["token"])
        await asyncio.wait_for(plugin.replies.get(), WAIT_S)
        assert not task.done()
        await plugin.click(STEVE, "approve", shown["token"])
        outcome = await task
        await asyncio.wait_for(plugin.replies.get(), WAIT_S)
        # A replayed click finds nothing: the token was single-use.
        await plugin.click(STEVE, "approve", shown["token"])
        await asyncio.wait_for(plugin.replies.get(), WAIT_S)
    assert shown["player"] == STEVE["uuid"]
    assert shown["expires_ms"] == 30_000
    # Owner text travels as values, never as markup.
    assert shown["prompt"]["values"] == {"title": "Starter kit", "message": "Take <b>bread</b>?"}
    assert [button["answer"] for button in shown["buttons"]] == ["approve", "deny"]
    output = outcome.result["output"]
    assert outcome.result["status"] == "ok"
    assert output["approval"] == {"approval_status": "approved", "choice": None, "player": "Steve"}
    assert output["dispatch"]["dispatch_status"] == "dispatched"
    assert plugin.sent("command.dispatch") == [{"executor": "console", "command": "say yes"}]
    assert live.broker.open_prompts == 0


async def test_select_answer_carries_the_choice(engine: Engine) -> None:
    async with live_link() as live:
        plugin = await live.connect()
        task = await _start(_runtime(live, engine, _ask(SELECT)))
        shown = await asyncio.wait_for(plugin.prompts.get(), WAIT_S)
        await plugin.click(STEVE, "approve", shown["token"], "stone")
        outcome = await task
    buttons = [(b["answer"], b["option"], b["label"]["values"]) for b in shown["buttons"][:2]]
    assert buttons == [
        ("approve", "bread", {"label": "Bread"}),
        ("approve", "stone", {"label": "Stone"}),
    ]
    assert shown["buttons"][2]["answer"] == "deny"
    assert outcome.result["output"]["approval"]["choice"] == "stone"
    assert plugin.sent("command.dispatch") == [{"executor": "console", "command": "say stone"}]


async def test_denied_dispatches_nothing(engine: Engine) -> None:
    async with live_link() as live:
        plugin = await live.connect()
        task = await _start(_runtime(live, engine, _ask(CONFIRM)))
        shown = await asyncio.wait_for(plugin.prompts.get(), WAIT_S)
        await plugin.click(STEVE, "deny", shown["token"])
        outcome = await task
    assert outcome.result == {
        "status": "declined",
        "output": {"approval_status": "denied", "choice": None, "player": "Steve"},
    }
    assert plugin.sent("command.dispatch") == []


async def test_unanswered_prompt_times_out(engine: Engine) -> None:
    async with live_link() as live:
        plugin = await live.connect()
        task = await _start(_runtime(live, engine, _ask(CONFIRM, timeout_ms=1_000)))
        shown = await asyncio.wait_for(plugin.prompts.get(), WAIT_S)
        outcome = await task
        await plugin.click(STEVE, "approve", shown["token"])  # too late
        await asyncio.wait_for(plugin.replies.get(), WAIT_S)
    assert outcome.result["output"]["approval_status"] == "timeout"
    assert plugin.sent("command.dispatch") == []


async def test_offline_target_is_refused_without_a_prompt(engine: Engine) -> None:
    async with live_link() as live:
        plugin = await live.connect()
        outcome = await (await _start(_runtime(live, engine, _ask(CONFIRM)), who="Nobody"))
    assert outcome.result["status"] == "refused"
    assert outcome.result["output"]["code"] == "player_offline"
    assert plugin.sent("approval.show") == []


async def test_a_prompt_the_plugin_did_not_show_is_refused(engine: Engine) -> None:
    async with live_link() as live:
        plugin = await live.connect(show_prompts=False)
        outcome = await (await _start(_runtime(live, engine, _ask(CONFIRM))))
    assert outcome.result["output"]["code"] == "not_shown"
    assert plugin.sent("command.dispatch") == []


async def test_cancelling_the_call_closes_the_prompt(engine: Engine) -> None:
    cancel = asyncio.Event()
    async with live_link() as live:
        plugin = await live.connect()
        task = await _start(_runtime(live, engine, _ask(CONFIRM)), cancel=cancel)
        shown = await asyncio.wait_for(plugin.prompts.get(), WAIT_S)
        cancel.set()
        outcome = await task
        open_after_cancel = live.broker.open_prompts
        await plugin.click(STEVE, "approve", shown["token"])
        await asyncio.wait_for(plugin.replies.get(), WAIT_S)
    assert outcome.result["output"]["error_code"] == "cancelled"
    assert open_after_cancel == 0
    assert plugin.sent("command.dispatch") == []
    operations = [f for kind, f in live.audit.events if kind == "function.operation"]
    assert [(f["action"], f["status"]) for f in operations] == [("approval.request", "cancelled")]
    assert [kind for kind, _ in live.audit.events if kind.startswith("function.")][-1] == (
        "function.cancel"
    )


async def test_link_loss_during_a_prompt_answers_cancelled(engine: Engine) -> None:
    async with live_link() as live:
        plugin = await live.connect()
        task = await _start(_runtime(live, engine, _ask(CONFIRM)))
        await asyncio.wait_for(plugin.prompts.get(), WAIT_S)
        await plugin.ws.close()
        outcome = await task
    assert outcome.result["output"]["approval_status"] == "cancelled"
    assert plugin.sent("command.dispatch") == []


@pytest.mark.parametrize(
    "command", ["op Steve", "execute run op Steve", 'data merge block 1 2 3 {Command:"deop A"}']
)
async def test_a_never_listed_command_is_refused_whatever_the_capability(
    engine: Engine, command: str
) -> None:
    async with live_link() as live:
        plugin = await live.connect()
        runtime = _runtime(live, engine, _dispatch("console", command))
        outcome = await _call(runtime, "dispatch")
    assert outcome.result["output"]["code"] == "never_listed"
    assert "never list" in outcome.result["output"]["message"]
    assert plugin.sent("command.dispatch") == []


async def test_a_function_with_allow_never_reaches_a_never_listed_command(engine: Engine) -> None:
    async with live_link() as live:
        plugin = await live.connect()
        dispatch = _dispatch("console", "op Steve")
        runtime = _runtime(live, engine, dispatch, never_opt_outs=frozenset({"dispatch"}))
        outcome = await _call(runtime, "dispatch")
    assert outcome.result["output"]["dispatch_status"] == "dispatched", outcome.result
    assert [sent["command"] for sent in plugin.sent("command.dispatch")] == ["op Steve"]
