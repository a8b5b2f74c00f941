"""Function runtime cost with isolates in worker processes, each figure against a baseline
measured in the same run.

- A call with one `api.invoke` through a warm worker. Baselines: an empty onCall through the
  same workers, and the same call through the in-process engine the bridge used before
  (`V8Engine`, now what runs inside each worker). Budget: median under 5 ms.
- A worker replaced after a crash: a Function killed at its memory limit, then the time until
  the next call has run on a worker (the spare takes over; its successor starts meanwhile),
  and the time a replacement takes from spawn to ready. Budget: median under 150 ms.
- The largest stall of the bridge's event loop while 10 runaways and 10 crashers run: a 1 ms
  heartbeat's gaps, p99 and worst, against the same heartbeat idle. Budget: p99 under 10 ms.
- The bridge's own resident memory before and after all of that (the isolates and whatever
  they allocate live in the workers).
- The bridge's loop under a hostile Function: a 1 ms heartbeat's gaps while calls run one after
  another of a Function whose `toJSON` forges the driver's report into 15,000 `api.invoke`
  requests (a forged outbox), against the same heartbeat while the same number of trivial calls
  run, in alternating rounds. Goal: the hostile p99 within 1.5x the trivial one's.
- Fair sharing, with the pool `config.yml`'s defaults ask for: another player's call (p50 and
  p99) while one player holds k calls waiting on approval prompts nobody answers, and while one
  player runs a crash loop (20 calls in a row of a Function that kills its worker), each
  against the same calls on the idle pool measured in the same run. Goal: within 1.5x p50 and
  3x p99 of idle.

Run: ``python -m bench.function_bench`` (``--fair`` for the fair-sharing rows alone,
``--hostile`` for the hostile Function's row alone). The
machine may be shared: read the ratios.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionsFile
from bridge.functions.engine import Engine
from bridge.functions.host import ApprovalAnswer, ApprovalInput, DryRunHost, InvocationInfo
from bridge.functions.pool_settings import PoolSettings, WorkerLimits, pool_settings
from bridge.functions.runtime import FunctionRuntime
from bridge.functions.suspensions import Suspensions
from bridge.functions.v8_engine import V8Engine
from bridge.functions.worker_pool import WorkerEngine
from bridge.functions.worker_process import WorkerProcess
from bridge.store.audit_sink import MemoryAudit

BUDGET_CALL_MS = 5.0
BUDGET_REPLACE_MS = 150.0
BUDGET_STALL_P99_MS = 10.0
CALLS = 200
CRASHES = 15
RUNAWAYS = 10
CRASHERS = 10
SEGMENT_MS = 200

ONE_INVOKE = """async function onCall(ctx, api) {
  const done = await api.invoke({action: 'command.dispatch',
      input: {executor: 'console', command: 'give ' + ctx.player.name + ' bread 1'}});
  return {status: 'ok', output: {dispatch_status: done.dispatch_status}};
}"""
EMPTY = "async function onCall(ctx, api) { return {status: 'ok', output: {}}; }"
RUNAWAY = "async function onCall(ctx, api) { for (;;) {} }"
# Memory outside the V8 heap, killed at the worker's resident-memory limit within milliseconds.
OFF_HEAP = """async function onCall(ctx, api) {
  const held = []; for (;;) held.push(new Intl.Segmenter('en', {granularity: 'word'}));
}"""
# V8 aborts the worker (its out-of-memory fatal error): a real crash.
CRASHER = """async function onCall(ctx, api) {
  const s = 'a'.repeat(2 ** 27); s.replace(/a/g, () => 'bb'); return {status: 'ok', output: {}};
}"""
# A forged outbox: every report the driver writes lists 15,000 requests (the driver posts at
# most operations_per_call + 1 over a whole call; the bridge refuses the call).
FORGED_OUTBOX = """async function onCall(ctx, api) {
  const forged = [];
  for (let i = 0; i < 15000; i++) forged.push([i + 1,
      '{"action":"command.dispatch","input":{"executor":"console","command":"say ' + i + '"}}',
      null]);
  Object.prototype.toJSON = function () {
    if (!('done' in this)) return this;
    return {pending: false, requests: forged, dropped: 0, done: false, result: null};
  };
  await api.invoke({action: 'command.dispatch', input: {executor: 'console', command: 'x'}});
  return {status: 'ok', output: {}};
}"""
HOSTILE_CALLS = 10
HOSTILE_ROUNDS = 5
GOAL_HOSTILE = 1.5

CONFIRM_FIRST = """async function onCall(ctx, api) {
  await api.invoke({action: 'approval.request', input: {player: ctx.player.name,
      timeout_ms: 60000, interaction: {type: 'confirm', title: 'sure?', message: 'sure?'}}});
  return {status: 'ok', output: {}};
}"""
FAIR_CALLS = 60
CRASH_LOOP = 20
GOAL_P50 = 1.5
GOAL_P99 = 3.0


def entry(name: str, source: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": "benchmark",
        "enabled": True,
        "capabilities": ["command.dispatch.console", "approval.request"],
        "parameters": {"type": "object"},
        "on_call": source,
    }


def ms(seconds: float) -> float:
    return seconds * 1000


def verdict(value_ms: float, budget_ms: float) -> str:
    return f"budget {budget_ms} ms: {'within' if value_ms <= budget_ms else 'OVER'}"


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@dataclass
class UnansweredHost(DryRunHost):
    """Approval prompts nobody answers: the call waits until it is cancelled."""

    shown: int = 0

    async def request_approval(
        self, request: ApprovalInput, invocation: InvocationInfo
    ) -> ApprovalAnswer:
        self.shown += 1
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def runtime_for(
    engine: Engine,
    limits: FunctionLimits,
    *,
    host: DryRunHost | None = None,
    suspensions: Suspensions | None = None,
) -> FunctionRuntime:
    catalogue = FunctionsFile.model_validate(
        {
            "schema": 1,
            "api_version": 1,
            "functions": [
                entry("one", ONE_INVOKE),
                entry("empty", EMPTY),
                entry("spin", RUNAWAY),
                entry("off-heap", OFF_HEAP),
                entry("crash", CRASHER),
                entry("confirm", CONFIRM_FIRST),
                entry("forged-outbox", FORGED_OUTBOX),
            ],
        }
    )
    return FunctionRuntime(
        catalogue=catalogue,
        limits=limits,
        engine=engine,
        host=host or DryRunHost(),
        audit=MemoryAudit(),
        suspensions=suspensions,
    )


async def call(runtime: FunctionRuntime, name: str, player: str = "Steve") -> dict[str, Any]:
    return await runtime.call_function(name, {}, player=player)


async def timed(
    work: Callable[[], Awaitable[Any]], ready: Callable[[], Awaitable[None]], count: int
) -> list[float]:
    """Times of `count` calls, each started with the engine's isolates or workers ready (calls
    in a chat arrive seconds apart, so making the next one ahead is not on the clock)."""
    times = []
    for _ in range(count):
        await ready()
        started = time.perf_counter()
        await work()
        times.append(time.perf_counter() - started)
    return times


async def heartbeat_gaps(during: Awaitable[Any]) -> tuple[list[float], Any]:
    """Gaps between 1 ms ticks on this loop while `during` runs."""
    loop = asyncio.get_running_loop()
    gaps = []
    task = asyncio.ensure_future(during)
    while not task.done():
        before = loop.time()
        await asyncio.sleep(0.001)
        gaps.append(loop.time() - before)
    return gaps, task.result()


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[-1] if len(values) > 1 else values[0]


async def warm_calls(pool: WorkerEngine, limits: FunctionLimits) -> float:
    workers = runtime_for(pool, limits)
    engine = await V8Engine.start(ahead=4)
    in_process = runtime_for(engine, limits)

    async def one() -> None:
        assert (await call(workers, "one"))["status"] == "ok"

    async def empty() -> None:
        assert (await call(workers, "empty"))["status"] == "ok"

    async def one_in_process() -> None:
        assert (await call(in_process, "one"))["status"] == "ok"

    await timed(one, pool.wait_ready, 20)  # warm-up: first compilations, allocator growth
    await timed(one_in_process, engine.wait_ready, 20)
    # Interleaved rounds, so a change in the machine's load hits baseline and figure alike.
    floors: list[float] = []
    before: list[float] = []
    single: list[float] = []
    for _ in range(CALLS // 10):
        before += await timed(one_in_process, engine.wait_ready, 10)
        floors += await timed(empty, pool.wait_ready, 10)
        single += await timed(one, pool.wait_ready, 10)
    await engine.aclose()
    floor, old, median = (statistics.median(v) for v in (floors, before, single))
    p90 = statistics.quantiles(single, n=10)[-1]
    print(f"baseline  one api.invoke, in-process engine    median {ms(old):7.3f} ms")
    print(f"baseline  empty onCall, warm worker            median {ms(floor):7.3f} ms")
    print(
        f"call with one api.invoke, warm worker          median {ms(median):7.3f} ms  "
        f"p90 {ms(p90):7.3f} ms  = {median / old:5.2f}x in-process, {median / floor:5.2f}x "
        f"empty onCall  ({verdict(ms(median), BUDGET_CALL_MS)})"
    )
    return median


async def replacement(pool: WorkerEngine, limits: FunctionLimits) -> None:
    update = {"worker_memory_mb": 128, "sync_segment_ms": 5_000}
    runtime = runtime_for(pool, limits.model_copy(update=update))
    after_crash: list[float] = []
    for _ in range(CRASHES):
        await pool.wait_ready()
        result = await call(runtime, "off-heap")
        assert result["output"]["error_code"] == "memory_limit", result
        started = time.perf_counter()
        # Another player's call: the crashing player's own next call waits out a back-off.
        assert (await call(runtime, "empty", player="Alex"))["status"] == "ok"
        after_crash.append(time.perf_counter() - started)
    spawns = []
    for _ in range(CRASHES):
        started = time.perf_counter()
        worker = await pool.on_pool(WorkerProcess.spawn(WorkerLimits()))
        spawns.append(time.perf_counter() - started)
        await pool.on_pool(worker.close())
    median = statistics.median(after_crash)
    spawn = statistics.median(spawns)
    print(f"baseline  a worker started, spawn to ready     median {ms(spawn):7.3f} ms")
    print(
        f"call right after a worker was killed           median {ms(median):7.3f} ms  "
        f"worst {ms(max(after_crash)):7.3f} ms = {median / spawn:5.2f}x a fresh spawn  "
        f"({verdict(ms(median), BUDGET_REPLACE_MS)})"
    )


async def storm(pool: WorkerEngine, limits: FunctionLimits) -> None:
    runaways = runtime_for(pool, limits)
    # A segment limit long enough for V8 to reach its fatal error, and no memory watch.
    update = {"worker_memory_mb": 4_096, "sync_segment_ms": 10_000}
    crashers = runtime_for(pool, limits.model_copy(update=update))
    await pool.wait_ready()
    idle, _ = await heartbeat_gaps(asyncio.sleep(2))
    replaced = pool.replaced
    # Each from a player of its own: one player's share would queue their own calls.
    calls = [call(runaways, "spin", f"spinner{i}") for i in range(RUNAWAYS)]
    calls += [call(crashers, "crash", f"crasher{i}") for i in range(CRASHERS)]
    started = time.perf_counter()
    gaps, results = await heartbeat_gaps(asyncio.gather(*calls))
    took = time.perf_counter() - started
    codes: dict[str, int] = {}
    for result in results:
        code = result["output"].get("error_code", "ok")
        codes[code] = codes.get(code, 0) + 1
    print(
        f"baseline  idle heartbeat                       p99 gap {ms(p99(idle)):7.3f} ms  "
        f"worst {ms(max(idle)):7.3f} ms"
    )
    print(
        f"{RUNAWAYS} runaways + {CRASHERS} crashers ({took:4.1f} s, {pool.replaced - replaced} "
        f"workers replaced, results {codes})"
    )
    print(
        f"  bridge loop while they ran                   p99 gap {ms(p99(gaps)):7.3f} ms  "
        f"worst {ms(max(gaps)):7.3f} ms = {p99(gaps) / p99(idle):5.2f}x idle p99  "
        f"({verdict(ms(p99(gaps)), BUDGET_STALL_P99_MS)})"
    )


async def hostile(pool: WorkerEngine, limits: FunctionLimits) -> None:
    # Time for V8 to build the forged list on a loaded machine: the row is about the bridge.
    runtime = runtime_for(pool, limits.model_copy(update={"sync_segment_ms": 5_000}))

    async def calls(name: str) -> list[str]:
        codes = []
        for _ in range(HOSTILE_CALLS):
            await pool.wait_ready()
            result = await call(runtime, name)
            codes.append(result["output"].get("error_code", "ok"))
        return codes

    await calls("forged-outbox")  # warm-up
    trivial: list[float] = []
    forged: list[float] = []
    codes: set[str] = set()
    for _ in range(HOSTILE_ROUNDS):
        gaps, _ = await heartbeat_gaps(calls("empty"))
        trivial += gaps
        gaps, results = await heartbeat_gaps(calls("forged-outbox"))
        forged += gaps
        codes.update(results)
    ratio = p99(forged) / p99(trivial)
    print(
        f"baseline  loop during trivial calls            p99 gap {ms(p99(trivial)):7.3f} ms  "
        f"worst {ms(max(trivial)):7.3f} ms"
    )
    print(
        f"loop gap under a hostile Function              p99 gap {ms(p99(forged)):7.3f} ms  "
        f"worst {ms(max(forged)):7.3f} ms = {ratio:5.2f}x trivial p99  "
        f"(goal {GOAL_HOSTILE}x: {'within' if ratio <= GOAL_HOSTILE else 'OVER'})"
    )
    print(f"  (a forged outbox of 15,000 requests; results {sorted(codes)})")


async def other_player(runtime: FunctionRuntime, count: int = FAIR_CALLS) -> list[float]:
    """Alex's trivial calls, one at a time with a short pause (chat calls come seconds apart;
    the pause is the same in every scenario)."""
    times = []
    for _ in range(count):
        await asyncio.sleep(0.02)
        started = time.perf_counter()
        result = await call(runtime, "empty", player="Alex")
        times.append(time.perf_counter() - started)
        assert result["status"] == "ok", result
    return times


def fair_row(label: str, times: list[float], idle: list[float]) -> None:
    p50, idle50 = statistics.median(times), statistics.median(idle)
    high, idle99 = p99(times), p99(idle)
    ok = p50 / idle50 <= GOAL_P50 and high / idle99 <= GOAL_P99
    print(
        f"{label:<46} p50 {ms(p50):7.3f} ms = {p50 / idle50:5.2f}x idle  p99 {ms(high):7.3f} ms "
        f"= {high / idle99:5.2f}x idle  (goal {GOAL_P50}x / {GOAL_P99}x: "
        f"{'within' if ok else 'OVER'})"
    )


async def fairness() -> None:
    limits = FunctionLimits(sync_segment_ms=SEGMENT_MS, worker_memory_mb=128)
    settings = pool_settings(limits)
    pool = await WorkerEngine.start(settings)
    try:
        plain = runtime_for(pool, limits)
        await pool.wait_ready()
        await other_player(plain, 10)  # warm-up
        idle = await other_player(plain)
        print(
            f"fair sharing, the default pool ({settings.workers} kept, up to "
            f"{settings.max_workers} calls, {settings.share} per player)"
        )
        idle50 = ms(statistics.median(idle))
        print(
            f"baseline  another player's call, idle pool     p50 {idle50:7.3f} ms  "
            f"p99 {ms(p99(idle)):7.3f} ms"
        )
        for held in (2, settings.share):
            host = UnansweredHost()
            steve = runtime_for(pool, limits, host=host)
            waiting = [asyncio.ensure_future(call(steve, "confirm")) for _ in range(held)]
            while host.shown < held:
                await asyncio.sleep(0.01)
            await pool.wait_ready()
            # The first of Alex's calls took the spare and a new one started: measured from
            # when it is ready (steady state, as for the idle baseline's warm-up).
            await other_player(plain, 5)
            await pool.wait_ready()
            times = await other_player(plain)
            for task in waiting:
                task.cancel()
            await asyncio.gather(*waiting, return_exceptions=True)
            fair_row(f"one player holds {held} pending approvals", times, idle)
            await pool.wait_ready()
        await crash_loop(pool, limits, plain, idle)
    finally:
        await pool.aclose()


async def crash_loop(
    pool: WorkerEngine, limits: FunctionLimits, plain: FunctionRuntime, idle: list[float]
) -> None:
    crasher = runtime_for(pool, limits, suspensions=Suspensions())
    replaced = pool.replaced
    codes: dict[str, int] = {}

    async def loop() -> None:
        for _ in range(CRASH_LOOP):
            result = await call(crasher, "off-heap")
            code = result["output"].get("error_code", "ok")
            codes[code] = codes.get(code, 0) + 1

    cpu_before = os.times()
    crashing = asyncio.ensure_future(loop())
    times = await other_player(plain)
    await crashing
    cpu = os.times()
    children = (cpu.children_user + cpu.children_system) - (
        cpu_before.children_user + cpu_before.children_system
    )
    fair_row(
        f"a crash loop ({CRASH_LOOP} calls, {pool.replaced - replaced} workers replaced)",
        times,
        idle,
    )
    print(f"  crash loop results {codes}; reaped workers' CPU {children:4.1f} s")


async def run() -> None:
    limits = FunctionLimits(sync_segment_ms=SEGMENT_MS)
    rss_before_pool = rss_mb()
    pool = await WorkerEngine.start(PoolSettings(workers=2))
    try:
        await warm_calls(pool, limits)
        rss_before = rss_mb()
        await replacement(pool, limits)
        await storm(pool, limits)
        await hostile(pool, limits)
        rss_after = rss_mb()
    finally:
        await pool.aclose()
    await fairness()
    print(
        f"bridge RSS: {rss_before_pool:6.1f} MB before the pool, {rss_before:6.1f} MB after the "
        f"warm calls, {rss_after:6.1f} MB after the crashes and runaways "
        f"(= {rss_after / rss_before:4.2f}x)"
    )


async def hostile_alone() -> None:
    limits = FunctionLimits(sync_segment_ms=SEGMENT_MS)
    pool = await WorkerEngine.start(PoolSettings(workers=2))
    try:
        await hostile(pool, limits)
    finally:
        await pool.aclose()


def main() -> None:
    # `--fair`: only the fair-sharing rows; `--hostile`: only the hostile Function's row.
    if "--fair" in sys.argv[1:]:
        asyncio.run(fairness())
    elif "--hostile" in sys.argv[1:]:
        asyncio.run(hostile_alone())
    else:
        asyncio.run(run())


if __name__ == "__main__":
    main()
