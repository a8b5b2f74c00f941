"""The bridge's own pools and the web lookups' pool are apart from the default one and from
each other: what fills one never holds another."""

from __future__ import annotations

import asyncio
import threading

from bridge.executors import Pool, executor, run_in
from bridge.web.connector import system_resolver

HANG_GUARD_S = 30.0


async def _fill(pool: Pool) -> tuple[threading.Event, list[asyncio.Future[None]]]:
    loop = asyncio.get_running_loop()
    release = threading.Event()
    busy: asyncio.Queue[None] = asyncio.Queue()

    def hold() -> None:
        loop.call_soon_threadsafe(busy.put_nowait, None)
        release.wait()

    held = [loop.run_in_executor(executor(pool), hold) for _ in range(pool.threads)]
    for _ in held:
        await busy.get()
    return release, held


async def test_a_web_lookup_waits_in_its_own_pool_not_in_the_default_one() -> None:
    release, held = await _fill(Pool.WEB_LOOKUPS)
    try:
        # A numeric host: getaddrinfo answers it without asking any resolver.
        lookup = asyncio.ensure_future(system_resolver("127.0.0.1", 80))
        async with asyncio.timeout(HANG_GUARD_S):
            assert await asyncio.to_thread(lambda: "default pool free") == "default pool free"
            assert await run_in(Pool.LEASES, lambda: "leases free") == "leases free"
        assert not lookup.done()  # it waits behind the stalled lookups, and only there
    finally:
        release.set()
        await asyncio.gather(*held)
    async with asyncio.timeout(HANG_GUARD_S):
        assert await lookup == ["127.0.0.1"]


async def test_each_of_the_bridge_pools_runs_while_the_others_are_full() -> None:
    for free in Pool:
        filled = [await _fill(pool) for pool in Pool if pool is not free]
        try:
            async with asyncio.timeout(HANG_GUARD_S):
                assert await run_in(free, threading.current_thread) is not None
        finally:
            for release, held in filled:
                release.set()
                await asyncio.gather(*held)
