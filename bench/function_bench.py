"""Function runtime cost: a call with one `api.invoke`, 20 concurrent calls, and the largest
event-loop stall while 10 runaway Functions are stopped, each against a baseline measured in
the same run.

Run: ``python -m bench.function_bench``. Baselines: creating and hardening one V8 isolate (what
a call would pay without isolates made ahead), an empty onCall through the same runtime path,
and the largest gap of an idle heartbeat. Budget (architecture.md): median call with one
``api.invoke``, fresh isolate included, under 5 ms.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from py_mini_racer import MiniRacer

from bridge.functions.catalogue import FunctionsFile
from bridge.functions.host import DryRunHost
from bridge.functions.limits import FunctionLimits
from bridge.functions.prelude import PRELUDE
from bridge.functions.runtime import FunctionRuntime
from bridge.functions.v8_engine import V8Engine
from bridge.store.audit_sink import MemoryAudit

BUDGET_MEDIAN_MS = 5.0
CALLS = 200
CONCURRENT = 20
RUNAWAYS = 10
SEGMENT_MS = 200
STALL_ROUNDS = 5

ONE_INVOKE = """async function onCall(ctx, api) {
  const done = await api.invoke({action: 'command.dispatch',
      input: {executor: 'console', command: 'give ' + ctx.player.name + ' bread 1'}});
  return {status: 'ok', output: {dispatch_status: done.dispatch_status}};
}"""
EMPTY = "async function onCall(ctx, api) { return {status: 'ok', output: {}}; }"
RUNAWAY = "async function onCall(ctx, api) { for (;;) {} }"


def entry(name: str, source: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": "benchmark",
        "enabled": True,
        "capabilities": ["command.dispatch.console"],
        "parameters": {"type": "object"},
        "on_call": source,
    }


def ms(seconds: float) -> float:
    return seconds * 1000


async def timed(call: Callable[[], Awaitable[Any]], engine: V8Engine, count: int) -> list[float]:
    """Times of `count` calls, each started with the isolates made ahead all ready (calls in a
    chat arrive seconds apart, so the refill between them is not on the clock)."""
    times = []
    for _ in range(count):
        await engine.wait_ready()
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return times


def isolate_creation(count: int) -> list[float]:
    """Run in a thread of its own: mini-racer binds an isolate to the loop that creates it."""

    async def create_all() -> list[float]:
        times = []
        for _ in range(count):
            started = time.perf_counter()
            racer = MiniRacer()
            await racer.eval_cancelable(PRELUDE)
            times.append(time.perf_counter() - started)
            racer.close()
        return times

    return asyncio.run(create_all())


async def heartbeat_gap(during: Awaitable[Any]) -> tuple[float, int, Any]:
    """Largest gap between 1 ms ticks on this loop while `during` runs."""
    loop = asyncio.get_running_loop()
    largest, ticks = 0.0, 0
    task = asyncio.ensure_future(during)
    while not task.done():
        before = loop.time()
        await asyncio.sleep(0.001)
        largest = max(largest, loop.time() - before)
        ticks += 1
    return largest, ticks, task.result()


async def run() -> None:
    limits = FunctionLimits(sync_segment_ms=SEGMENT_MS)
    catalogue = FunctionsFile.model_validate(
        {
            "schema": 1,
            "api_version": 1,
            "functions": [entry("one", ONE_INVOKE), entry("empty", EMPTY), entry("spin", RUNAWAY)],
        }
    )
    engine = await V8Engine.start(ahead=4)
    runtime = FunctionRuntime(
        catalogue=catalogue, limits=limits, engine=engine, host=DryRunHost(), audit=MemoryAudit()
    )

    async def one() -> None:
        result = await runtime.call_function("one", {}, player="Steve")
        assert result["status"] == "ok", result

    async def empty() -> None:
        assert (await runtime.call_function("empty", {}, player="Steve"))["status"] == "ok"

    await timed(one, engine, 20)  # warm-up: first compilations, allocator growth
    # Interleaved rounds, so a change in the machine's load hits baseline and figure alike.
    creations: list[float] = []
    floors: list[float] = []
    single: list[float] = []
    for _ in range(CALLS // 10):
        creations += await asyncio.to_thread(isolate_creation, 3)
        floors += await timed(empty, engine, 10)
        single += await timed(one, engine, 10)
    creation = statistics.median(creations)
    floor = statistics.median(floors)
    median = statistics.median(single)
    p90 = statistics.quantiles(single, n=10)[-1]
    print(f"baseline  creating + hardening one isolate     median {ms(creation):7.3f} ms")
    print(f"baseline  empty onCall, isolate made ahead     median {ms(floor):7.3f} ms")
    print(
        f"call with one api.invoke, isolate made ahead   median {ms(median):7.3f} ms  "
        f"p90 {ms(p90):7.3f} ms  = {median / creation:5.2f}x isolate creation, "
        f"{median / floor:5.2f}x empty onCall  (budget {BUDGET_MEDIAN_MS} ms: "
        f"{'within' if ms(median) <= BUDGET_MEDIAN_MS else 'OVER'})"
    )

    batches = []
    for _ in range(10):
        await engine.wait_ready()
        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(CONCURRENT)))
        batches.append(time.perf_counter() - started)
    batch = statistics.median(batches)
    print(
        f"{CONCURRENT} concurrent calls (4 isolates ready)          median batch "
        f"{ms(batch):7.3f} ms = {batch / median:5.2f}x one call, "
        f"{ms(batch) / CONCURRENT:6.3f} ms per call"
    )

    idle_gaps, stalls, ticks, stopped_after = [], [], [], []
    for _ in range(STALL_ROUNDS):
        idle_gap, _, _ = await heartbeat_gap(asyncio.sleep(SEGMENT_MS / 1000 * 2))
        spinning = asyncio.gather(
            *(runtime.call_function("spin", {}, player="Steve") for _ in range(RUNAWAYS))
        )
        started = time.perf_counter()
        stall, beats, results = await heartbeat_gap(spinning)
        stopped_after.append(time.perf_counter() - started)
        codes = {result["output"]["error_code"] for result in results}
        assert codes == {"sync_time_limit"}, codes
        idle_gaps.append(idle_gap)
        stalls.append(stall)
        ticks.append(beats)
    idle = statistics.median(idle_gaps)
    stall = statistics.median(stalls)
    print(f"baseline  idle heartbeat, largest gap          median {ms(idle):7.3f} ms")
    print(
        f"{RUNAWAYS} runaways stopped (limit {SEGMENT_MS} ms), largest loop stall median "
        f"{ms(stall):7.3f} ms (worst {ms(max(stalls)):7.3f}) = {stall / idle:5.2f}x idle; "
        f"{min(ticks)}+ ticks while they ran; all stopped after "
        f"{ms(statistics.median(stopped_after)):6.1f} ms"
    )
    await engine.aclose()


def main() -> None:
    asyncio.run(run())


if __name__ == "__main__":
    main()
