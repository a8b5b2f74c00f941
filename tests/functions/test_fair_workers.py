"""One player's waiting calls never hold up another's (real worker processes).

A call holds its worker for its whole life, also while its script only awaits an approval
nobody answers. Before, the pool had `workers` processes and nothing else: two such calls of
one player left every other player's call waiting until its workflow limit. Now the pool grows
on demand to `max_workers`, one player holds at most `tenant_share` of them, and a call that
gets no worker in time ends with its own code."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bridge.control.function_limits import FunctionLimits
from bridge.functions.engine import WorkersBusy
from bridge.functions.pool_settings import PoolSettings, pool_settings
from bridge.functions.runtime import FunctionRuntime
from bridge.functions.worker_pool import WorkerEngine, crash_delay

from .support import ONLINE, WAIT_S, ScriptedHost, body, function, output, runtime

APPROVAL = (
    "{action: 'approval.request', input: {player: 'Steve', timeout_ms: 60000, "
    "interaction: {type: 'confirm', title: 't', message: 'm'}}}"
)
CONFIRM_FIRST = function(
    body(f"await api.invoke({APPROVAL}); return {{status: 'ok', output: {{}}}};"),
    name="confirm",
    capabilities=["approval.request"],
)
TRIVIAL = function(body("return {status: 'ok', output: {fine: true}};"), name="trivial")
LIMITS = FunctionLimits(workflow_ms=60_000)


@pytest.fixture
async def growing() -> AsyncIterator[WorkerEngine]:
    """One worker kept started (and a spare), up to four calls at once, two per player. A call
    waits at most two seconds for a worker: the tests wait until the spare is ready before
    each call that must find one at once, however slowly the machine starts workers."""
    settings = PoolSettings(workers=1, spare=1, max_workers=4, tenant_share=2, wait_s=2.0)
    pool = await WorkerEngine.start(settings)
    try:
        yield pool
    finally:
        await asyncio.wait_for(pool.aclose(), WAIT_S)


async def _approvals_shown(host: ScriptedHost, count: int) -> None:
    async def shown() -> None:
        while sum(1 for kind, _ in host.calls if kind == "approval") < count:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(shown(), WAIT_S)


def _steve_waits(pool: WorkerEngine) -> tuple[FunctionRuntime, ScriptedHost]:
    host = ScriptedHost(block_approvals=True)
    rt, _, _ = runtime(pool, CONFIRM_FIRST, TRIVIAL, limits=LIMITS, host=host)
    return rt, host


async def _two_waiting(
    pool: WorkerEngine, rt: FunctionRuntime, host: ScriptedHost
) -> list[asyncio.Future[Any]]:
    """Two calls of Steve's awaiting their approval prompts, each started on a ready worker."""
    waiting: list[asyncio.Future[Any]] = []
    for count in (1, 2):
        await asyncio.wait_for(pool.wait_ready(), WAIT_S)
        waiting.append(asyncio.ensure_future(rt.call_function("confirm", {}, player=ONLINE)))
        await _approvals_shown(host, count)
    return waiting


async def _cancel(calls: list[asyncio.Future[Any]]) -> None:
    for call in calls:
        call.cancel()
    await asyncio.gather(*calls, return_exceptions=True)


async def test_pending_approvals_hold_no_worker_another_player_needs(
    growing: WorkerEngine,
) -> None:
    rt, host = _steve_waits(growing)
    waiting = await _two_waiting(growing, rt, host)
    try:
        assert await growing.busy() == 2  # more than `workers`: the pool grew for them
        await asyncio.wait_for(growing.wait_ready(), WAIT_S)  # and started a spare beside them
        other, _, _ = runtime(growing, TRIVIAL, limits=LIMITS)
        result = await asyncio.wait_for(other.call_function("trivial", {}, player="Alex"), WAIT_S)
        assert output(result) == {"fine": True}
        assert not any(call.done() for call in waiting)
    finally:
        await _cancel(waiting)


async def test_one_player_holds_at_most_their_share(growing: WorkerEngine) -> None:
    rt, host = _steve_waits(growing)
    waiting = await _two_waiting(growing, rt, host)
    try:
        # A third call of the same player waits for one of their own, never for others.
        third, _, audit = runtime(growing, TRIVIAL, limits=LIMITS)
        result = await asyncio.wait_for(third.call_function("trivial", {}, player=ONLINE), WAIT_S)
        assert output(result)["error_code"] == "workers_busy", result
        assert "the most one player may run at once" in output(result)["message"]
        assert audit.events[-1][1]["error_code"] == "workers_busy"
        # Another player still gets a worker at once.
        await asyncio.wait_for(growing.wait_ready(), WAIT_S)
        other, _, _ = runtime(growing, TRIVIAL, limits=LIMITS)
        fine = await asyncio.wait_for(other.call_function("trivial", {}, player="Alex"), WAIT_S)
        assert output(fine) == {"fine": True}
    finally:
        await _cancel(waiting)


async def test_the_pool_gives_up_a_full_pool_with_workers_busy() -> None:
    settings = PoolSettings(workers=1, spare=0, max_workers=1, tenant_share=1, wait_s=0.3)
    pool = await WorkerEngine.start(settings)
    try:
        held = await pool.fresh(heap_bytes=16 * 2**20, tenant="steve")
        with pytest.raises(WorkersBusy, match="all 1 Function workers are busy"):
            await pool.fresh(heap_bytes=16 * 2**20, tenant="alex")
        with pytest.raises(WorkersBusy, match="the most one player may run at once"):
            await pool.fresh(heap_bytes=16 * 2**20, tenant="steve")
        await held.dispose()
        again = await asyncio.wait_for(pool.fresh(heap_bytes=16 * 2**20, tenant="alex"), WAIT_S)
        await again.dispose()
    finally:
        await asyncio.wait_for(pool.aclose(), WAIT_S)


async def test_the_pool_shrinks_back_once_the_calls_end() -> None:
    settings = PoolSettings(
        workers=1, spare=1, max_workers=4, tenant_share=1, wait_s=WAIT_S, trim_after_s=0.0
    )
    growing = await WorkerEngine.start(settings)
    try:
        await _grow_and_shrink(growing)
    finally:
        await asyncio.wait_for(growing.aclose(), WAIT_S)


async def _grow_and_shrink(growing: WorkerEngine) -> None:
    await asyncio.wait_for(growing.wait_ready(), WAIT_S)
    assert len(await growing.worker_pids()) == 2  # one worker and the spare
    held = [await growing.fresh(heap_bytes=16 * 2**20, tenant=f"p{i}") for i in range(3)]
    await asyncio.wait_for(growing.wait_ready(), WAIT_S)
    assert len(await growing.worker_pids()) == 4  # three calls and the spare
    for sandbox in held:
        await sandbox.dispose()

    async def shrunk() -> None:
        while len(await growing.worker_pids()) > 2:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(shrunk(), WAIT_S)


def test_the_settings_follow_config() -> None:
    limits = FunctionLimits(
        workers=2, max_workers=10, player_share_percent=30, worker_wait_ms=2_500
    )
    settings = pool_settings(limits)
    assert (settings.cap, settings.share, settings.wait_s) == (10, 3, 2.5)
    # Never below `workers`, and a share of at least one call.
    tiny = pool_settings(FunctionLimits(workers=4, max_workers=1, player_share_percent=1))
    assert (tiny.cap, tiny.share) == (4, 1)


def test_replacements_back_off_in_a_run_of_losses() -> None:
    delays = [crash_delay(n) for n in range(1, 12)]
    assert delays[:2] == [0.0, 0.0]  # a crash now and then is replaced at once
    assert delays[2:6] == [0.25, 0.5, 1.0, 2.0]
    assert max(delays) == 15.0 and delays == sorted(delays)


async def test_a_spare_refilled_in_the_background_starts_at_the_lowest_priority() -> None:
    pool = await WorkerEngine.start(PoolSettings(workers=1, spare=1, wait_s=WAIT_S))
    try:
        await asyncio.wait_for(pool.wait_ready(), WAIT_S)

        def start_nice(pid: int) -> str:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                return cmdline.read().split(b"\0")[-2].decode()

        pids = await pool.worker_pids()
        # The first worker was waited for: it started at normal priority.
        assert sorted(start_nice(pid) for pid in pids) == ["0", "19"]
        # One lost while the other is idle: its successor is not urgent.
        os.kill(pids[0], signal.SIGKILL)

        async def replaced() -> list[int]:
            while True:
                now = await pool.worker_pids()
                if len(now) == 2 and pids[0] not in now:
                    return now
                await asyncio.sleep(0.01)

        now = await asyncio.wait_for(replaced(), WAIT_S)
        [successor] = [pid for pid in now if pid not in pids]
        assert start_nice(successor) == "19"
    finally:
        await asyncio.wait_for(pool.aclose(), WAIT_S)
