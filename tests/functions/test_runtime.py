"""call_function end to end on real V8: capabilities, input shapes, outcomes, audit."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import pytest

from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionsFile, FunctionSpec
from bridge.functions.runtime import FunctionRuntime
from bridge.functions.worker_pool import WorkerEngine
from bridge.store.audit_sink import MemoryAudit

from .support import ONLINE, WAIT_S, ScriptedHost, body, function, output, runtime

APPROVAL = (
    "{action: 'approval.request', input: {player: ctx.player.name, "
    "interaction: {type: 'confirm', title: 'Kit', message: 'Give the kit?'}, timeout_ms: 5000}}"
)


async def call(rt: FunctionRuntime, name: str = "f", args: Any = None) -> dict[str, Any]:
    return await asyncio.wait_for(
        rt.call_function(name, {} if args is None else args, player=ONLINE), WAIT_S
    )


async def test_args_and_player_reach_onCall(engine: WorkerEngine) -> None:
    source = body("return {status: 'ok', output: {who: ctx.player.name, n: ctx.args.n * 2}};")
    params = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    rt, _, _ = runtime(engine, function(source, parameters=params))
    assert await call(rt, args={"n": 21}) == {"status": "ok", "output": {"who": ONLINE, "n": 42}}


async def test_approval_then_dispatch_with_capabilities(engine: WorkerEngine) -> None:
    source = body(f"""
        const answer = await api.invoke({APPROVAL});
        if (answer.approval_status !== 'approved') return {{status: 'declined', output: answer}};
        const done = await api.invoke({{action: 'command.dispatch',
            input: {{executor: 'console', command: 'give ' + ctx.player.name + ' bread 3'}}}});
        return {{status: 'ok', output: done}};
    """)
    caps = ["approval.request", "command.dispatch.console"]
    rt, host, audit = runtime(engine, function(source, capabilities=caps))
    result = await call(rt)
    assert result == {
        "status": "ok",
        "output": {
            "dispatch_status": "dispatched",
            "execution_result": "success",
            "feedback": ["ran give Steve bread 3"],
            "executor": "console",
            "player": None,
        },
    }
    assert [kind for kind, _ in host.calls] == ["approval", "dispatch"]
    assert audit.kinds() == [
        "function.start",
        "function.operation",
        "function.operation",
        "function.end",
    ]


async def test_denied_approval_is_data_and_nothing_is_dispatched(engine: WorkerEngine) -> None:
    source = body(f"""
        const answer = await api.invoke({APPROVAL});
        if (answer.approval_status !== 'approved') return {{status: 'declined', output: answer}};
        await api.invoke({{action: 'command.dispatch',
                           input: {{executor: 'console', command: 'x'}}}});
        return {{status: 'ok', output: {{}}}};
    """)
    caps = ["approval.request", "command.dispatch.console"]
    host = ScriptedHost(approval_status="denied")
    rt, _, _ = runtime(engine, function(source, capabilities=caps), host=host)
    result = await call(rt)
    assert result["status"] == "declined"
    assert output(result)["approval_status"] == "denied"
    assert [kind for kind, _ in host.calls] == ["approval"]


async def test_missing_capability_is_a_catchable_error_and_recorded(engine: WorkerEngine) -> None:
    source = body("""
        try {
          await api.invoke({action: 'command.dispatch', input: {executor: 'player',
              player: ctx.player.name, command: 'op Steve'}});
          return {status: 'ok', output: {}};
        } catch (e) {
          return {status: 'error', output: {code: e.code, name: e.name, msg: e.message}};
        }
    """)
    rt, host, audit = runtime(engine, function(source, capabilities=["command.dispatch.console"]))
    result = await call(rt)
    assert output(result)["code"] == "capability_missing"
    assert output(result)["name"] == "ApiError"
    assert "command.dispatch.player" in output(result)["msg"]
    assert host.calls == []
    operation = [fields for kind, fields in audit.events if kind == "function.operation"]
    assert operation[0]["status"] == "refused"
    assert operation[0]["error_code"] == "capability_missing"
    assert operation[0]["capability"] == "command.dispatch.player"


async def test_uncaught_api_error_becomes_the_result_error_code(engine: WorkerEngine) -> None:
    source = body("await api.invoke({action: 'approval.request', input: {}}); return 1;")
    rt, _, _ = runtime(engine, function(source, capabilities=["approval.request"]))
    result = await call(rt)
    assert result["status"] == "error"
    assert output(result)["error_code"] == "invalid_input"


async def test_invalid_inputs_are_refused_with_the_field(engine: WorkerEngine) -> None:
    cases = {
        "noAction": "{input: {}}",
        "badAction": "{action: 'file.read', input: {}}",
        "extraField": (
            "{action: 'command.dispatch', input: {executor: 'console', command: 'x'}, x: 1}"
        ),
        "playerMissing": "{action: 'command.dispatch', input: {executor: 'player', command: 'x'}}",
        "consoleWithPlayer": (
            "{action: 'command.dispatch', input: {executor: 'console', player: 'Steve', "
            "command: 'x'}}"
        ),
        "selectOneOption": (
            "{action: 'approval.request', input: {player: 'Steve', timeout_ms: 5000, "
            "interaction: {type: 'select', title: 't', message: 'm', "
            "options: [{id: 'a', label: 'A'}]}}}"
        ),
        "notJson": "{action: 'command.dispatch', input: {executor: 'console', command: 1n}}",
        "twoObjects": "{action: 'x'}, {input: 1}, 3",
    }
    lines = "\n".join(
        f"try {{ await api.invoke({request}); out.{key} = 'accepted'; }} "
        f"catch (e) {{ out.{key} = e.code + ' ' + e.message; }}"
        for key, request in cases.items()
    )
    source = body("const out = {};\n" + lines + "\nreturn {status: 'ok', output: out};")
    caps = ["approval.request", "command.dispatch.console", "command.dispatch.player"]
    rt, host, _ = runtime(engine, function(source, capabilities=caps))
    out = output(await call(rt))
    assert host.calls == []
    assert set(out) == set(cases)
    for key, text in out.items():
        assert text.startswith("invalid_input "), (key, text)
    assert "action" in out["noAction"]
    assert "player" in out["playerMissing"]
    assert "two options" in out["selectOneOption"]


async def test_two_argument_spelling_is_the_same_request(engine: WorkerEngine) -> None:
    source = body(
        "const r = await api.invoke('command.dispatch', {executor: 'console', command: 'say'});"
        "return {status: 'ok', output: r};"
    )
    rt, host, _ = runtime(engine, function(source, capabilities=["command.dispatch.console"]))
    assert output(await call(rt))["dispatch_status"] == "dispatched"
    assert len(host.calls) == 1


async def test_native_tool_needs_exact_capability_and_registration(engine: WorkerEngine) -> None:
    source = body("""
        const out = {};
        for (const tool of ['echo', 'other', 'unregistered', 'boom']) {
          try {
            out[tool] = await api.invoke({action: 'native_tool.call',
                input: {tool, arguments: {x: 1}}});
          } catch (e) { out[tool] = e.message; }
        }
        return {status: 'ok', output: out};
    """)
    caps = [
        "native_tool.call.echo",
        "native_tool.call.unregistered",
        "native_tool.call.boom",
    ]
    rt, host, _ = runtime(engine, function(source, capabilities=caps))
    out = output(await call(rt))
    assert out["echo"] == {
        "operation_status": "completed",
        "output": {"echo": {"x": 1}},
        "error_code": None,
    }
    assert out["other"].startswith("capability_missing")
    assert out["unregistered"].startswith("unknown_tool")
    assert out["boom"] == "host_error: the host failed; see the bridge log"
    assert "secret" not in json.dumps(out)
    assert [request.tool for _, request in host.calls] == ["echo", "boom"]


async def test_call_function_is_refused_at_run_time_even_if_declared(engine: WorkerEngine) -> None:
    # The catalogue refuses the capability at load; a catalogue built around that check
    # (model_construct skips validation) must still not reach call_function.
    source = body("""
        try { await api.invoke({action: 'native_tool.call', input: {tool: 'call_function',
              arguments: {name: 'f', arguments: {}}}}); return {status: 'ok', output: {}}; }
        catch (e) { return {status: 'refused', output: {code: e.code}}; }
    """)
    spec = FunctionSpec.model_construct(
        name="f",
        description="d",
        enabled=True,
        capabilities=["native_tool.call.call_function"],
        parameters={"type": "object"},
        on_call=source,
    )
    catalogue = FunctionsFile.model_construct(schema_version=1, api_version=1, functions=[spec])
    host = ScriptedHost(tools={"call_function"})
    rt = FunctionRuntime(
        catalogue=catalogue,
        limits=FunctionLimits(),
        engine=engine,
        host=host,
        audit=MemoryAudit(),
    )
    assert await call(rt) == {"status": "refused", "output": {"code": "unknown_tool"}}
    assert host.calls == []


async def test_host_refusal_keeps_its_code(engine: WorkerEngine) -> None:
    source = body("""
        try { await api.invoke({action: 'approval.request', input: {player: 'Alex',
              interaction: {type: 'confirm', title: 't', message: 'm'}, timeout_ms: 5000}}); }
        catch (e) { return {status: 'error', output: {error_code: e.code}}; }
    """)
    rt, _, audit = runtime(engine, function(source, capabilities=["approval.request"]))
    assert output(await call(rt)) == {"error_code": "player_offline"}
    ops = [fields for kind, fields in audit.events if kind == "function.operation"]
    assert ops[0]["status"] == "failed"
    assert ops[0]["error_code"] == "player_offline"


async def test_unknown_disabled_and_case_sensitive_names(engine: WorkerEngine) -> None:
    ok = body("return {status: 'ok', output: {}};")
    rt, _, audit = runtime(
        engine, function(ok, name="kit"), function(ok, name="off", enabled=False)
    )
    assert output(await call(rt, "Kit"))["error_code"] == "unknown_function"
    assert output(await call(rt, "off"))["error_code"] == "function_disabled"
    assert (await call(rt, "kit"))["status"] == "ok"
    assert audit.kinds()[:2] == ["function.refused", "function.refused"]


async def test_invalid_arguments_report_at_most_three_violations(engine: WorkerEngine) -> None:
    params = {
        "type": "object",
        "properties": {k: {"type": "integer"} for k in "abcde"},
        "additionalProperties": False,
    }
    rt, _, _ = runtime(engine, function(body("return 1;"), parameters=params))
    result = await call(rt, args={k: "x" for k in "abcde"})
    assert output(result)["error_code"] == "invalid_arguments"
    assert len(output(result)["violations"]) == 3
    assert output(await call(rt, args=[1]))["violations"] == [
        "arguments must be a JSON object, not list"
    ]


async def test_audit_carries_the_source_hash_on_every_event(engine: WorkerEngine) -> None:
    source = body(
        "await api.invoke({action: 'command.dispatch', input: {executor: 'console', "
        "command: 'say hi'}}); return {status: 'ok', output: {}};"
    )
    rt, _, audit = runtime(engine, function(source, capabilities=["command.dispatch.console"]))
    await call(rt)
    digest = hashlib.sha256(source.encode()).hexdigest()
    assert audit.kinds() == ["function.start", "function.operation", "function.end"]
    assert all(fields["source_sha256"] == digest for _, fields in audit.events)
    assert len({fields["invocation_id"] for _, fields in audit.events}) == 1


async def test_each_call_gets_a_fresh_context(engine: WorkerEngine) -> None:
    source = (
        "var seen = (typeof seen === 'undefined') ? 0 : seen + 1;\n"
        "globalThis.leak = (globalThis.leak || 0) + 1;\n"
        + body("return {status: 'ok', output: {seen, leak: globalThis.leak}};")
    )
    rt, _, _ = runtime(engine, function(source))
    results = [await call(rt) for _ in range(3)]
    assert results == [{"status": "ok", "output": {"seen": 0, "leak": 1}}] * 3


async def test_bad_results_are_refused(engine: WorkerEngine) -> None:
    cases = {
        "return 5;": "invalid_result",
        "return {status: 'ok'};": "invalid_result",
        "return {status: 'ok', output: {}, extra: 1};": "invalid_result",
        "return {status: 'OK!', output: {}};": "invalid_result",
        "return undefined;": "invalid_result",
        "const a = {}; a.self = a; return {status: 'ok', output: a};": "invalid_result",
        "return {status: 'ok', output: {n: 10n}};": "invalid_result",
        "throw new Error('nope');": "script_error",
    }
    for js, code in cases.items():
        rt, _, _ = runtime(engine, function(body(js)))
        result = await call(rt)
        assert result["status"] == "error", js
        assert output(result)["error_code"] == code, (js, result)


async def test_syntax_error_and_missing_onCall(engine: WorkerEngine) -> None:
    rt, _, _ = runtime(engine, function("async function onCall(ctx, api) { return {"))
    result = await call(rt)
    assert output(result)["error_code"] == "script_error"
    assert "SyntaxError" in output(result)["message"]
    rt, _, _ = runtime(engine, function("const onCallx = 1; // mentions onCall"))
    assert "does not define onCall" in output(await call(rt))["message"]


async def test_lexical_onCall_is_found(engine: WorkerEngine) -> None:
    source = "const onCall = async (ctx, api) => ({status: 'ok', output: {lexical: true}});"
    rt, _, _ = runtime(engine, function(source))
    assert await call(rt) == {"status": "ok", "output": {"lexical": True}}


async def test_awaiting_forever_is_reported_as_stalled(engine: WorkerEngine) -> None:
    rt, _, _ = runtime(engine, function(body("await new Promise(() => {}); return 1;")))
    assert output(await call(rt))["error_code"] == "workflow_stalled"


class BrokenEngine:
    """An engine that cannot make sandboxes, running drivers on the caller's loop."""

    async def run(self, work: Any) -> Any:
        return await work

    async def fresh(
        self,
        *,
        heap_bytes: int,
        memory_bytes: int | None = None,
        tenant: str = "",
        value_chars: int | None = None,
    ) -> Any:
        from bridge.functions.engine import EngineUnavailable

        raise EngineUnavailable("no isolates today")

    async def aclose(self) -> None:
        return None


async def test_engine_failure_is_a_result_not_a_crash() -> None:
    rt, host, audit = runtime(BrokenEngine(), function(body("return 1;")))
    result = await call(rt)
    assert output(result)["error_code"] == "engine_unavailable"
    assert "no isolates today" in output(result)["message"]
    assert audit.kinds() == ["function.start", "function.end"]
    assert host.calls == []


async def test_registry_handler_binds_the_turns_player(engine: WorkerEngine) -> None:
    from bridge.functions.tool import call_function_handler
    from bridge.tools.registry import CallContext

    source = body(
        "const r = await api.invoke({action: 'command.dispatch', input: {executor: 'console', "
        "command: 'say ' + ctx.player.name}}); "
        "return {status: 'ok', output: {keys: Object.keys(ctx.player)}};"
    )
    rt, host, _ = runtime(engine, function(source, capabilities=["command.dispatch.console"]))
    handler = call_function_handler(rt)
    uuid = "069a79f4-44e9-4726-a5be-fca90e38aaf5"
    context = CallContext(turn_id="t1", call_id="c1", player_uuid=uuid, player_name=ONLINE)
    result = await asyncio.wait_for(handler({"name": "f", "arguments": {}}, context), WAIT_S)
    # The Function sees the name only; the host also gets the UUID.
    assert result == {"status": "ok", "output": {"keys": ["name"]}}
    assert host.invocations[0].player == ONLINE
    assert host.invocations[0].player_uuid == uuid
    assert uuid not in json.dumps(result)


class FaultyEngine(BrokenEngine):
    """An engine whose sandbox fails in a way no engine should (a runtime bug)."""

    async def fresh(
        self,
        *,
        heap_bytes: int,
        memory_bytes: int | None = None,
        tenant: str = "",
        value_chars: int | None = None,
    ) -> Any:
        raise RuntimeError("bug with a secret detail")


async def test_a_runtime_fault_is_an_internal_error_result(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rt, _, audit = runtime(FaultyEngine(), function(body("return 1;")))
    result = await call(rt)
    assert output(result)["error_code"] == "internal_error"
    assert "secret" not in json.dumps(result)
    assert audit.kinds() == ["function.start", "function.end"]
    assert "bug with a secret detail" in caplog.text
