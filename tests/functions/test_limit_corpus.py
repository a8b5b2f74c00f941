"""The limit corpus: every runaway and every limit ends with its documented error code.

Runaways run beside a heartbeat on the test's event loop and beside a well-behaved Function.
What is asserted is behaviour: the event loop kept ticking and the other Function completed
while the runaway was still running. The one timing bound (the loop never stopped for half a
synchronous-segment limit) is a gross stall check, not a speed test: a loop blocked by the
runaway would stall for the whole segment limit or more, while scheduling noise on a loaded
machine stays far below it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from bridge.control.function_limits import FunctionLimits
from bridge.functions.runtime import FunctionRuntime
from bridge.functions.worker_pool import WorkerEngine

from .support import ONLINE, WAIT_S, Heartbeat, ScriptedHost, body, function, output, runtime

SEGMENT_MS = 600
LIMITS = FunctionLimits(
    sync_segment_ms=SEGMENT_MS,
    heap_mb=16,
    operations_per_call=5,
    concurrent_operations=3,
    pending_approvals=1,
    result_chars=2_000,
    result_depth=6,
    result_members=50,
)
DISPATCH = "{action: 'command.dispatch', input: {executor: 'console', command: 'say hi'}}"
APPROVAL = (
    "{action: 'approval.request', input: {player: 'Steve', timeout_ms: 60000, "
    "interaction: {type: 'confirm', title: 't', message: 'm'}}}"
)
CAPS = ["approval.request", "command.dispatch.console"]
WITNESS = function(body("return {status: 'ok', output: {alive: true}};"), name="witness")


async def run_runaway(
    js: str,
    engine: WorkerEngine,
    *,
    source: str | None = None,
    limits: FunctionLimits = LIMITS,
    overlap: bool = True,
) -> tuple[dict[str, Any], FunctionRuntime]:
    """Run the runaway; meanwhile the witness must complete and the loop keep ticking."""
    rt, _, _ = runtime(
        engine, function(source or body(js), capabilities=CAPS), WITNESS, limits=limits
    )
    # A worker stopped at a limit is replaced, not reused: let the replacements of earlier
    # tests' workers start first, so the witness never waits for one.
    await asyncio.wait_for(engine.wait_ready(), WAIT_S)
    async with Heartbeat() as heart:
        runaway = asyncio.ensure_future(rt.call_function("f", {}, player=ONLINE))
        witness = await asyncio.wait_for(rt.call_function("witness", {}, player=ONLINE), WAIT_S)
        still_running = not runaway.done()
        ticks_while_running = heart.ticks
        result = await asyncio.wait_for(runaway, WAIT_S)
    assert witness == {"status": "ok", "output": {"alive": True}}
    if overlap:
        assert still_running, "the witness should finish while the runaway still runs"
    assert ticks_while_running > 0
    assert heart.largest_gap < SEGMENT_MS / 1000 / 2, heart.largest_gap
    return result, rt


async def call_with_heartbeat(rt: FunctionRuntime) -> dict[str, Any]:
    """Call Function "f" while the loop's heartbeat is watched (same bound as above)."""
    async with Heartbeat() as heart:
        result = await asyncio.wait_for(rt.call_function("f", {}, player=ONLINE), WAIT_S)
    assert heart.largest_gap < SEGMENT_MS / 1000 / 2, heart.largest_gap
    return result


def code_of(result: dict[str, Any]) -> str:
    assert result["status"] == "error", result
    code = output(result)["error_code"]
    assert isinstance(code, str)
    return code


async def test_sync_endless_loop(engine: WorkerEngine) -> None:
    result, _ = await run_runaway("while (true) {}", engine)
    assert code_of(result) == "sync_time_limit"


async def test_endless_loop_at_top_level_of_the_source(engine: WorkerEngine) -> None:
    result, _ = await run_runaway("", engine, source="for (;;) {}\n" + body("return 1;"))
    assert code_of(result) == "sync_time_limit"


async def test_endless_loop_after_an_await(engine: WorkerEngine) -> None:
    result, _ = await run_runaway(f"await api.invoke({DISPATCH}); for (;;) {{}}", engine)
    assert code_of(result) == "sync_time_limit"
    assert output(result)["effects_not_rolled_back"][0]["action"] == "command.dispatch"


async def test_endless_loop_after_promise_all(engine: WorkerEngine) -> None:
    js = f"await Promise.all([api.invoke({DISPATCH}), api.invoke({DISPATCH})]); while (1) {{}}"
    result, _ = await run_runaway(js, engine)
    assert code_of(result) == "sync_time_limit"


async def test_microtask_storm(engine: WorkerEngine) -> None:
    # Constant memory: each job queues the next and returns nothing to adopt.
    js = "const storm = () => { Promise.resolve().then(storm); }; storm(); await api.invoke(1);"
    result, _ = await run_runaway(js, engine)
    assert code_of(result) == "sync_time_limit"


async def test_heap_bomb(engine: WorkerEngine) -> None:
    # Large steps and a long segment limit, so the heap limit is reached first even when
    # the machine is busy (the isolate thread runs at a lower priority).
    js = "const hoard = []; for (;;) hoard.push(new Array(1 << 20).fill(hoard.length + 0.5));"
    limits = LIMITS.model_copy(update={"sync_segment_ms": 10_000})
    # A heap fills in a fraction of a second; the witness may or may not be quicker.
    result, _ = await run_runaway(js, engine, limits=limits, overlap=False)
    assert code_of(result) == "memory_limit"


async def test_array_buffer_bomb_has_nothing_to_allocate_with(engine: WorkerEngine) -> None:
    js = "const held = []; for (;;) held.push(new ArrayBuffer(1 << 30));"
    rt, _, _ = runtime(engine, function(body(js)), limits=LIMITS)
    result = await call_with_heartbeat(rt)
    assert code_of(result) == "script_error"
    assert "ArrayBuffer is not defined" in output(result)["message"]


async def test_stack_overflow(engine: WorkerEngine) -> None:
    rt, _, _ = runtime(engine, function(body("const f = () => f() + 1; f();")), limits=LIMITS)
    result = await call_with_heartbeat(rt)
    assert code_of(result) == "script_error"
    assert "Maximum call stack size exceeded" in output(result)["message"]


async def collect_codes(
    engine: WorkerEngine, js: str, host: ScriptedHost | None = None
) -> list[str]:
    source = body(f"""
        const codes = [];
        const attempt = (request) => api.invoke(request).then(
            () => codes.push('ok'), (e) => codes.push(e.code));
        {js}
        return {{status: 'ok', output: {{codes}}}};
    """)
    rt, _, audit = runtime(engine, function(source, capabilities=CAPS), limits=LIMITS, host=host)
    result = await call_with_heartbeat(rt)
    codes = output(result).get("codes", result)
    assert isinstance(codes, list)
    refused = [f for kind, f in audit.events if kind == "function.operation" and f["error_code"]]
    assert refused, "refusals are recorded"
    return codes


async def test_too_many_operations(engine: WorkerEngine) -> None:
    codes = await collect_codes(engine, f"for (let i = 0; i < 20; i++) await attempt({DISPATCH});")
    assert codes == ["ok"] * 5 + ["operation_limit"] * 15


async def test_too_many_concurrent_operations(engine: WorkerEngine) -> None:
    codes = await collect_codes(
        engine, f"await Promise.all([1, 2, 3, 4, 5].map(() => attempt({DISPATCH})));"
    )
    assert sorted(codes) == ["concurrency_limit"] * 2 + ["ok"] * 3


async def test_too_many_pending_approvals(engine: WorkerEngine) -> None:
    js = f"await Promise.all([attempt({APPROVAL}), attempt({APPROVAL})]);"
    codes = await collect_codes(engine, js)
    assert sorted(codes) == ["approval_limit", "ok"]


async def test_oversize_request_input(engine: WorkerEngine) -> None:
    big = "{action: 'command.dispatch', input: {executor: 'console', command: 'x'.repeat(5000)}}"
    codes = await collect_codes(engine, f"await attempt({big});")
    assert codes == ["invalid_input"]


async def test_result_limits(engine: WorkerEngine) -> None:
    cases = {
        "{s: 'x'.repeat(5000)}": "result_too_large",
        "{a: {b: {c: {d: {e: {f: {g: 1}}}}}}}": "result_too_large",
        "{list: Array.from({length: 100}, (_, i) => i)}": "result_too_large",
    }
    for value, code in cases.items():
        rt, _, _ = runtime(
            engine, function(body(f"return {{status: 'ok', output: {value}}};")), limits=LIMITS
        )
        result = await call_with_heartbeat(rt)
        assert code_of(result) == code, value


async def test_wall_time_limit_cancels_the_pending_approval(engine: WorkerEngine) -> None:
    # Long enough for the approval to be shown first on a loaded machine (it takes a few ms).
    limits = LIMITS.model_copy(update={"workflow_ms": 1_500})
    host = ScriptedHost(block_approvals=True)
    js = f"await api.invoke({DISPATCH}); await api.invoke({APPROVAL}); return 1;"
    rt, _, audit = runtime(engine, function(body(js), capabilities=CAPS), limits=limits, host=host)
    result = await call_with_heartbeat(rt)
    assert code_of(result) == "workflow_time_limit"
    assert host.approval_started.is_set()
    assert host.cancelled == ["approval"]
    effects = output(result)["effects_not_rolled_back"]
    assert [e["action"] for e in effects] == ["command.dispatch"]
    assert "cannot be rolled back" in effects[0]["note"]
    assert audit.kinds()[-1] == "function.timeout"
    assert audit.events[-1][1]["source_sha256"]


async def test_cancel_event_cancels_the_workflow(engine: WorkerEngine) -> None:
    host = ScriptedHost(block_approvals=True)
    js = f"await api.invoke({APPROVAL}); return 1;"
    rt, _, audit = runtime(engine, function(body(js), capabilities=CAPS), limits=LIMITS, host=host)
    cancel = asyncio.Event()
    call = asyncio.ensure_future(rt.call_function("f", {}, player=ONLINE, cancel=cancel))
    await asyncio.wait_for(host.approval_started.wait(), WAIT_S)
    cancel.set()
    result = await asyncio.wait_for(call, WAIT_S)
    assert code_of(result) == "cancelled"
    assert host.cancelled == ["approval"]
    assert audit.kinds()[-1] == "function.cancel"


async def test_cancelling_the_task_cancels_the_workflow_and_is_audited(
    engine: WorkerEngine,
) -> None:
    host = ScriptedHost(block_approvals=True)
    js = f"await api.invoke({APPROVAL}); return 1;"
    rt, _, audit = runtime(engine, function(body(js), capabilities=CAPS), limits=LIMITS, host=host)
    call = asyncio.ensure_future(rt.call_function("f", {}, player=ONLINE))
    await asyncio.wait_for(host.approval_started.wait(), WAIT_S)
    call.cancel()
    done, _ = await asyncio.wait({call}, timeout=WAIT_S)
    assert call in done and call.cancelled()
    assert host.cancelled == ["approval"]
    assert audit.kinds()[-1] == "function.cancel"
    ops = [f for kind, f in audit.events if kind == "function.operation"]
    assert ops[-1]["status"] == "cancelled"


async def test_cancelling_a_spinning_function_stops_it(engine: WorkerEngine) -> None:
    rt, _, audit = runtime(
        engine,
        function(body("for (;;) {}")),
        WITNESS,
        limits=LIMITS.model_copy(update={"sync_segment_ms": 10_000}),
    )
    cancel = asyncio.Event()
    call = asyncio.ensure_future(rt.call_function("f", {}, player=ONLINE, cancel=cancel))
    witness = await asyncio.wait_for(rt.call_function("witness", {}, player=ONLINE), WAIT_S)
    assert output(witness) == {"alive": True}
    cancel.set()
    assert code_of(await asyncio.wait_for(call, WAIT_S)) == "cancelled"
    # The isolate was terminated: a later call still gets a working sandbox.
    assert output(await asyncio.wait_for(rt.call_function("witness", {}, player=ONLINE), WAIT_S))


async def test_storm_left_behind_after_the_result_is_terminated(engine: WorkerEngine) -> None:
    js = "const storm = () => { Promise.resolve().then(storm); }; storm(); return {status: 'ok'};"
    result, rt = await run_runaway(js, engine)
    # The storm never lets the microtask queue drain, so the segment's limit ends it.
    assert code_of(result) == "sync_time_limit"
    witness = await asyncio.wait_for(rt.call_function("witness", {}, player=ONLINE), WAIT_S)
    assert output(witness) == {"alive": True}


async def test_catastrophic_regex_is_stopped(engine: WorkerEngine) -> None:
    # Backtracking runs inside the regexp engine, not in a JavaScript loop.
    js = "/^(a+)+$/.test('a'.repeat(64) + '!'); return {status: 'ok', output: {}};"
    result, _ = await run_runaway(js, engine)
    assert code_of(result) == "sync_time_limit"
