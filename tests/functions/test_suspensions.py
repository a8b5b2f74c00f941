"""A Function whose calls keep killing their worker is suspended for a while (issue 38).

Before, twenty calls in a row that each killed their worker gave twenty respawns in seconds
and slowed every other player's calls several times."""

from __future__ import annotations

import asyncio

from bridge.control.function_limits import FunctionLimits
from bridge.functions.suspensions import Suspension, Suspensions
from bridge.functions.worker_pool import WorkerEngine

from .support import ONLINE, WAIT_S, body, function, output, runtime

# Memory outside the V8 heap: the bridge kills the worker at its resident-memory limit.
BOMB = function(
    body("const held = []; for (;;) held.push(new Intl.Segmenter('en', {granularity: 'word'}));"),
    name="bomb",
)
WITNESS = function(body("return {status: 'ok', output: {alive: true}};"), name="witness")
LIMITS = FunctionLimits(
    sync_segment_ms=5_000, worker_memory_mb=128, suspend_after_losses=2, suspend_minutes=7
)


async def test_a_function_that_keeps_killing_its_worker_is_suspended(
    engine: WorkerEngine,
) -> None:
    suspensions = Suspensions()
    told: list[Suspension] = []
    rt, _, audit = runtime(
        engine, BOMB, WITNESS, limits=LIMITS, suspensions=suspensions, on_suspended=told.append
    )
    for _ in range(2):
        await asyncio.wait_for(engine.wait_ready(), WAIT_S)
        result = await asyncio.wait_for(rt.call_function("bomb", {}, player=ONLINE), WAIT_S)
        assert output(result)["error_code"] == "memory_limit"
    assert told == [Suspension("bomb", 2, 7)]
    [suspended] = [fields for kind, fields in audit.events if kind == "function.suspended"]
    assert (suspended["function"], suspended["losses"], suspended["minutes"]) == ("bomb", 2, 7)
    assert suspended["source_sha256"]

    replaced = engine.replaced
    refused = await asyncio.wait_for(rt.call_function("bomb", {}, player=ONLINE), WAIT_S)
    assert output(refused)["error_code"] == "function_suspended"
    assert "7 more minute(s)" in output(refused)["message"]
    assert audit.events[-1] == (
        "function.refused",
        {
            "invocation_id": audit.events[-1][1]["invocation_id"],
            "function": "bomb",
            "player": ONLINE,
            "error_code": "function_suspended",
        },
    )
    assert engine.replaced == replaced  # refused without taking (and killing) a worker
    witness = await asyncio.wait_for(rt.call_function("witness", {}, player=ONLINE), WAIT_S)
    assert output(witness) == {"alive": True}


def test_a_suspension_ends_after_its_minutes_and_a_new_source_starts_fresh() -> None:
    now = [0.0]
    suspensions = Suspensions(clock=lambda: now[0])
    limits = FunctionLimits(suspend_after_losses=3, suspend_minutes=10)
    assert suspensions.lost("f", "a", limits) is None
    now[0] = 601.0  # the first loss left the window
    assert suspensions.lost("f", "a", limits) is None
    assert suspensions.lost("f", "a", limits) is None
    assert suspensions.lost("f", "a", limits) == Suspension("f", 3, 10)
    assert suspensions.remaining_s("f", "a") == 600.0
    assert suspensions.remaining_s("f", "b") == 0.0  # the owner changed the source
    assert suspensions.lost("f", "a", limits) is None  # already suspended: told once
    now[0] = 1_201.0
    assert suspensions.remaining_s("f", "a") == 0.0
