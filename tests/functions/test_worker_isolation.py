"""Attacks that used to end or starve the whole bridge, run against real worker processes.

Each attack runs beside a well-behaved Function (the witness) and a heartbeat on the test's
event loop: the attack must end only its own call, with the runtime's stable code, while the
witness completes and the loop keeps ticking. Several of these ended the pytest process itself
when Functions ran in-process (a V8 fatal error aborts the process that hosts the isolate).
"""

from __future__ import annotations

import asyncio
import os
import signal
import struct
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bridge.control.function_limits import FunctionLimits
from bridge.functions.pool_settings import PoolSettings
from bridge.functions.runtime import FunctionRuntime
from bridge.functions.worker_pool import WorkerEngine
from bridge.functions.worker_protocol import FrameError, answer_cap, body_length
from bridge.store.audit_sink import MemoryAudit
from tests.support.proc_stat import NICENESS, PROCESS_GROUP, SESSION, autogroup, stat_fields

from .support import ONLINE, WAIT_S, Heartbeat, body, function, output, runtime

WITNESS = function(body("return {status: 'ok', output: {alive: true}};"), name="witness")
DISPATCH = "{action: 'command.dispatch', input: {executor: 'console', command: 'say hi'}}"
# Long segments: the attack must be stopped by the limit under test, not by the segment timer.
LONG = FunctionLimits(sync_segment_ms=10_000, workflow_ms=60_000)


async def attack(
    engine: WorkerEngine,
    js: str,
    limits: FunctionLimits = LONG,
    *,
    capabilities: Any = None,
    overlap: bool = False,
) -> tuple[dict[str, Any], MemoryAudit, FunctionRuntime]:
    """Run `js` as onCall while the witness runs and the loop is watched; with `overlap`, the
    witness must complete while the attack is still running."""
    rt, _, audit = runtime(
        engine,
        function(body(js), capabilities=capabilities or ["command.dispatch.console"]),
        WITNESS,
        limits=limits,
    )
    # Workers lost by an earlier test are replaced first: the witness must not wait for one.
    await asyncio.wait_for(engine.wait_ready(), WAIT_S)
    async with Heartbeat() as heart:
        call = asyncio.ensure_future(rt.call_function("f", {}, player=ONLINE))
        witness = await asyncio.wait_for(rt.call_function("witness", {}, player=ONLINE), WAIT_S)
        still_running = not call.done()
        ticks_meanwhile = heart.ticks
        result = await asyncio.wait_for(call, WAIT_S)
    assert witness == {"status": "ok", "output": {"alive": True}}
    if overlap:
        assert still_running, "the witness should finish while the attack still runs"
    assert ticks_meanwhile > 0
    # A gross bound: an engine blocking the loop would stall it for seconds.
    assert heart.largest_gap < 1.0, heart.largest_gap
    return result, audit, rt


def records(audit: MemoryAudit, kind: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The attacking Function's records (the witness shares the audit log)."""
    return [
        (k, fields)
        for k, fields in audit.events
        if fields.get("function") == "f" and (kind is None or k == kind)
    ]


def lost_records(audit: MemoryAudit) -> list[dict[str, Any]]:
    return [fields for _, fields in records(audit, "function.worker_lost")]


def end_record(audit: MemoryAudit) -> dict[str, Any]:
    kind, fields = records(audit)[-1]
    assert kind == "function.end", records(audit)
    return fields


async def test_a_v8_fatal_error_ends_only_its_call(engine: WorkerEngine) -> None:
    # Splitting a 256 Mi-character string asks for an array over V8's size limit: V8 aborts the
    # process at once (its own fatal report, exit by SIGTRAP). The resident-memory watch is set
    # high so that V8 reaches its fatal error first.
    js = "'a'.repeat(2 ** 28).split('');"
    limits = LONG.model_copy(update={"worker_memory_mb": 4_096})
    result, audit, rt = await attack(
        engine, js + " return {status: 'ok', output: {}};", limits, overlap=True
    )
    assert result["status"] == "error"
    assert output(result)["error_code"] in ("memory_limit", "engine_crashed")
    [lost] = lost_records(audit)
    assert lost["exit"] == "signal SIGTRAP"  # V8's fatal-error abort
    assert "Fatal" in str(lost["detail"])
    assert end_record(audit)["error_code"] == output(result)["error_code"]
    # The worker was replaced: the next call runs.
    again = await asyncio.wait_for(rt.call_function("witness", {}, player=ONLINE), WAIT_S)
    assert output(again) == {"alive": True}


async def test_off_heap_memory_counts_against_the_limit(engine: WorkerEngine) -> None:
    # Intl objects live outside the V8 heap: the heap limit never sees them.
    js = "const held = []; for (;;) held.push(new Intl.Segmenter('en', {granularity: 'word'}));"
    limits = LONG.model_copy(update={"sync_segment_ms": 3_000, "worker_memory_mb": 128})
    result, audit, _ = await attack(engine, js, limits, overlap=True)
    assert output(result)["error_code"] == "memory_limit"
    assert "over 128 MB" in output(result)["message"]
    [lost] = lost_records(audit)
    assert lost["reason"] == "memory limit"


async def test_a_cpu_spin_inside_a_builtin_is_killed_at_the_limit(engine: WorkerEngine) -> None:
    # lastIndexOf over a holey array of 2^32-1 slots loops inside the builtin for about a
    # minute without looking at V8's termination request.
    js = "Array(2 ** 32 - 1).lastIndexOf(1); return {status: 'ok', output: {}};"
    limits = LONG.model_copy(update={"sync_segment_ms": 300})
    result, audit, rt = await attack(engine, js, limits, overlap=True)
    assert output(result)["error_code"] == "sync_time_limit"
    # Whether the worker answered at the limit or had to be killed, it serves no other call:
    # V8 may still be inside the builtin.
    [lost] = lost_records(audit)
    assert lost["reason"] in ("time limit", "stopped at a limit")
    again = await asyncio.wait_for(rt.call_function("witness", {}, player=ONLINE), WAIT_S)
    assert output(again) == {"alive": True}


# Replacing toJSON makes every state the driver reports claim 100,000 requests.
TO_JSON_FLOOD = """
Object.prototype.toJSON = function () {
  if (!("done" in this)) return this;
  return {pending: false, requests: Array(100000).fill([1, null, "x"]), dropped: 0, done: false};
};
"""


async def test_a_to_json_flood_writes_one_refusal_record(engine: WorkerEngine) -> None:
    result, audit, _ = await attack(engine, TO_JSON_FLOOD + f"await api.invoke({DISPATCH});")
    assert output(result)["error_code"] == "protocol_error"
    operations = [fields for _, fields in records(audit, "function.operation")]
    assert len(operations) == 1, len(operations)
    assert operations[0]["error_code"] == "operation_limit"
    # Read only up to the first request past the limit (32 + the one the driver may post):
    # the other 99,966 are not parsed, so a forged list cannot hold the GIL for long.
    assert operations[0]["dropped"] == 34
    assert [kind for kind, _ in records(audit)] == [
        "function.start",
        "function.operation",
        "function.end",
    ]


async def test_the_limit_is_counted_from_requests_received(engine: WorkerEngine) -> None:
    # An honest driver past the limit: the bridge still writes one refusal record with a count.
    limits = FunctionLimits(operations_per_call=3, concurrent_operations=64)
    js = f"await Promise.allSettled(Array.from({{length: 50}}, () => api.invoke({DISPATCH})));"
    result, audit, _ = await attack(engine, js + " return {status: 'ok', output: {}};", limits)
    assert result["status"] == "ok"
    operations = [fields for _, fields in records(audit, "function.operation")]
    assert [fields["status"] for fields in operations] == ["completed"] * 3 + ["refused"]
    assert operations[-1]["dropped"] == 47


@pytest.mark.parametrize("code", ["memory_limit", "sync_time_limit", "engine_crashed", "cancelled"])
async def test_a_returned_error_cannot_forge_a_runtime_code(
    engine: WorkerEngine, code: str
) -> None:
    js = f"return {{status: 'error', output: {{error_code: '{code}', message: 'forged'}}}};"
    result, audit, _ = await attack(engine, js)
    assert output(result)["error_code"] == "invalid_result"
    assert "reserved for the runtime" in output(result)["message"]
    assert end_record(audit)["error_code"] == "invalid_result"


async def test_a_tampered_driver_cannot_forge_a_runtime_code(engine: WorkerEngine) -> None:
    js = """
Object.prototype.toJSON = function () {
  if (!("done" in this)) return this;
  return {pending: false, requests: [], dropped: 0, done: true, result: null,
          failure: {code: "memory_limit", message: "forged"}};
};
return {status: 'ok', output: {}};"""
    result, audit, _ = await attack(engine, js)
    assert output(result)["error_code"] == "script_error"
    assert end_record(audit)["error_code"] == "script_error"


async def test_a_plain_error_return_is_recorded_as_the_functions_own(engine: WorkerEngine) -> None:
    js = "return {status: 'error', output: {error_code: 'no_home', message: 'set a home first'}};"
    result, audit, _ = await attack(engine, js)
    assert result == {
        "status": "error",
        "output": {"error_code": "no_home", "message": "set a home first"},
    }
    end = end_record(audit)
    assert (end["status"], end["error_code"], end["function_error_code"]) == (
        "error",
        None,
        "no_home",
    )


@pytest.fixture
async def lone_worker() -> AsyncIterator[WorkerEngine]:
    """A pool of exactly one process, so a test knows which pid runs its call."""
    pool = await WorkerEngine.start(PoolSettings(workers=1, spare=0))
    try:
        yield pool
    finally:
        await asyncio.wait_for(pool.aclose(), WAIT_S)


async def test_a_worker_killed_by_a_signal_ends_its_call_and_is_replaced(
    lone_worker: WorkerEngine,
) -> None:
    rt, _, audit = runtime(lone_worker, function(body("for (;;) {}")), limits=LONG)
    [pid] = await lone_worker.worker_pids()
    call = asyncio.ensure_future(rt.call_function("f", {}, player=ONLINE))
    while not audit.events:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    os.kill(pid, signal.SIGSEGV)
    result = await asyncio.wait_for(call, WAIT_S)
    assert output(result)["error_code"] == "engine_crashed"
    [lost] = lost_records(audit)
    assert (lost["pid"], lost["exit"]) == (pid, "signal SIGSEGV")
    rt2, _, _ = runtime(lone_worker, WITNESS)
    again = await asyncio.wait_for(rt2.call_function("witness", {}, player=ONLINE), WAIT_S)
    assert output(again) == {"alive": True}
    assert pid not in await lone_worker.worker_pids()


async def test_workers_run_under_their_os_limits(lone_worker: WorkerEngine) -> None:
    [pid] = await lone_worker.worker_pids()
    with open(f"/proc/{pid}/environ", "rb") as environ:
        assert environ.read() == b""  # no secrets from the bridge's environment
    targets = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    assert [t for t in targets[:3] if t.startswith("pipe:")] == targets[:3]  # stdin/out/err
    # Beyond them only the event loops' own wake-up channels: unnamed Unix socket pairs,
    # eventfds and epoll; no file, no device, no network socket.
    with open(f"/proc/{pid}/net/unix") as unix:
        unnamed = {row.split()[6] for row in unix.read().splitlines()[1:] if len(row.split()) == 7}
    for target in targets[3:]:
        if target.startswith("socket:"):
            assert target[8:-1] in unnamed, target
        else:
            assert target.startswith(("pipe:", "anon_inode:")), target
    worker, bridge = stat_fields(pid), stat_fields(os.getpid())
    assert worker[NICENESS] == "19"
    # Niceness counts only within a scheduling group: the worker is in the bridge's session,
    # so Linux's autogroup weighs it inside the bridge's group, not as a peer of the whole
    # bridge; a process group of its own keeps a terminal's ^C the bridge's.
    assert worker[SESSION] == bridge[SESSION]
    assert autogroup(pid) == autogroup(os.getpid())
    assert worker[PROCESS_GROUP] == str(pid) != bridge[PROCESS_GROUP]
    with open(f"/proc/{pid}/limits") as limits:
        table = {line[:26].strip(): line[26:].split() for line in limits.read().splitlines()[1:]}
    assert table["Max core file size"][:2] == ["0", "0"]
    assert table["Max file size"][:2] == ["0", "0"]
    assert table["Max data size"][0] == str(1_024 * 1024 * 1024)
    assert table["Max cpu time"][0] == "600"
    assert int(table["Max open files"][0]) <= 64


@pytest.mark.parametrize(
    "source",
    [body('throw "\\ud800 lone";'), 'throw "\\ud800 lone";\n' + body("return 1;")],
    ids=["in-onCall", "top-level"],
)
async def test_a_thrown_lone_surrogate_is_a_script_error(engine: WorkerEngine, source: str) -> None:
    # No frame (nor audit record, nor request) can carry a lone surrogate: it becomes U+FFFD.
    rt, _, _ = runtime(engine, function(source))
    result = await asyncio.wait_for(rt.call_function("f", {}, player=ONLINE), WAIT_S)
    assert output(result)["error_code"] == "script_error"
    assert "\ufffd lone" in output(result)["message"]


async def test_the_workflow_limit_mid_builtin_kills_the_worker(engine: WorkerEngine) -> None:
    # The workflow ends while a builtin ignores termination: the worker does not answer the
    # request to stop, so it is killed, and the call ends at the workflow limit, not a minute
    # later when the builtin would have finished.
    js = "Array(2 ** 32 - 1).lastIndexOf(1); return {status: 'ok', output: {}};"
    limits = LONG.model_copy(update={"workflow_ms": 1_000})
    result, audit, rt = await attack(engine, js, limits, overlap=True)
    assert output(result)["error_code"] == "workflow_time_limit"
    assert records(audit)[-1][0] == "function.timeout"
    again = await asyncio.wait_for(rt.call_function("witness", {}, player=ONLINE), WAIT_S)
    assert output(again) == {"alive": True}


async def test_a_result_over_the_limit_is_refused_by_the_worker_by_its_size(
    engine: WorkerEngine,
) -> None:
    # 32 Mi characters: before, a value under the 64 MiB frame cap was sent, read and parsed
    # in the bridge before it was refused (a stall of its event loop), and one over it could
    # not be framed, so the worker never answered (sync_time_limit at the segment limit).
    # The driver refuses an honest result over result_chars in the sandbox; a replaced
    # toJSON makes the state it reports carry one anyway.
    js = """
const big = 'x'.repeat(2 ** 25);
Object.prototype.toJSON = function () {
  if (!("done" in this)) return this;
  return {pending: false, requests: [], dropped: 0, done: true, result: big};
};
return {status: 'ok', output: {}};"""
    limits = LONG.model_copy(update={"heap_mb": 512, "worker_memory_mb": 2_048})
    result, audit, rt = await attack(engine, js, limits)
    assert output(result)["error_code"] == "result_too_large"
    assert "characters, over" in output(result)["message"]
    assert end_record(audit)["error_code"] == "result_too_large"
    assert lost_records(audit) == []  # an honest refusal: the worker serves on
    again = await asyncio.wait_for(rt.call_function("witness", {}, player=ONLINE), WAIT_S)
    assert output(again) == {"alive": True}


def test_an_answer_larger_than_its_value_can_make_is_refused_from_its_header() -> None:
    cap = answer_cap(1_000)
    assert body_length(struct.pack(">I", cap), cap) == cap
    with pytest.raises(FrameError, match="announced, over"):
        body_length(struct.pack(">I", cap + 1), cap)
