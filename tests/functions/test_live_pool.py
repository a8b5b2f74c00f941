"""The Function worker pool follows its settings across reloads (real worker processes).

``functions.workers`` was read when the pool first started (at the first call, whenever that
was) and never again: a reload changing it was neither applied nor, before a call, even the
value the restart notice spoke of."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from bridge.app.wiring.runtime import Runtime
from bridge.control import init_config_dir
from bridge.functions.engine import EngineUnavailable
from bridge.functions.live_pool import LivePool
from bridge.functions.pool_settings import PoolSettings
from bridge.functions.worker_pool import WorkerEngine

from .live_link import WAIT_S
from .test_live_tool import CONTEXT, FUNCTIONS_YML


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _gone(pids: list[int]) -> None:
    while any(_alive(pid) for pid in pids):
        await asyncio.sleep(0.05)


async def test_a_reload_that_changes_workers_serves_the_next_call_from_a_new_pool(
    tmp_path: Path,
) -> None:
    init_config_dir(tmp_path)
    (tmp_path / "functions.yml").write_text(FUNCTIONS_YML, encoding="utf-8")
    (tmp_path / "config.yml").write_text("schema: 1\nfunctions:\n  workers: 1\n")
    runtime = Runtime.open(tmp_path)
    try:
        first = await asyncio.wait_for(runtime.functions.start(), WAIT_S)
        assert isinstance(first, WorkerEngine)
        await asyncio.wait_for(first.wait_ready(), WAIT_S)
        old_pids = await first.worker_pids()
        assert len(old_pids) == 2  # one worker and the spare

        (tmp_path / "config.yml").write_text("schema: 1\nfunctions:\n  workers: 2\n")
        await asyncio.to_thread(runtime.reload)
        assert runtime.served.function_pool.workers == 2
        assert runtime.restart_pending == []  # applied, not waiting for a restart

        result = await asyncio.wait_for(
            runtime.functions.call_function(
                {"name": "say-hello", "arguments": {"to": "Alex"}}, CONTEXT
            ),
            WAIT_S,
        )
        assert result["output"]["error_code"] == "link_down"  # it ran: no link in this test
        second = await asyncio.wait_for(runtime.functions.start(), WAIT_S)
        assert second is not first and isinstance(second, WorkerEngine)
        await asyncio.wait_for(second.wait_ready(), WAIT_S)
        assert len(await second.worker_pids()) == 3
        await asyncio.wait_for(_gone(old_pids), WAIT_S)  # the old pool was closed
    finally:
        await asyncio.wait_for(runtime.aclose(), WAIT_S)


async def test_a_call_holding_the_old_pool_keeps_it_until_it_ends() -> None:
    settings = [PoolSettings(workers=1, spare=0)]
    pool = LivePool(lambda: settings[-1])
    try:
        async with pool.hold() as held:
            settings.append(PoolSettings(workers=2, spare=0))
            fresh = await asyncio.wait_for(pool.start(), WAIT_S)
            assert fresh is not held and pool.settings == settings[-1]
            assert isinstance(held, WorkerEngine)
            assert len(await held.worker_pids()) == 1  # still open for the running call
        with_held_closed = asyncio.gather(*pool._closing)
        await asyncio.wait_for(with_held_closed, WAIT_S)
        try:
            await held.worker_pids()
        except EngineUnavailable:
            pass
        else:
            raise AssertionError("the retired pool is still open")
        assert await pool.start() is fresh  # unchanged settings: the same pool
    finally:
        await asyncio.wait_for(pool.aclose(), WAIT_S)
