"""The Function worker pool of the settings in force, swapped when a reload changes them.

`functions.workers` and `functions.worker_memory_mb` size the pool and set each worker's OS
limits, so a pool cannot take new values in place. A call takes the pool of the settings in
force when it starts and holds it to its end (`hold()`); when the settings changed since the
last pool started, a new pool starts for that call and the old one is closed as soon as no
call holds it. A pool that fails to start leaves the old one in force (the call is answered
`engine_unavailable`; the next call tries again).

The first pool starts with the first call (a server whose catalogue has no enabled Function
never pays for it) or when `start()` is awaited.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from bridge.functions.engine import Engine, EngineUnavailable
from bridge.functions.pool_settings import PoolSettings

log = logging.getLogger(__name__)


@dataclass(eq=False)
class _Pool:
    engine: Engine
    settings: PoolSettings
    calls: int = 0
    retired: bool = False


class LivePool:
    """`settings()`: the pool settings in force (the served configuration's)."""

    def __init__(self, settings: Callable[[], PoolSettings]) -> None:
        self._settings = settings
        self._active: _Pool | None = None
        self._retired: set[_Pool] = set()
        self._closing: set[asyncio.Task[None]] = set()
        self._starting = asyncio.Lock()
        self._closed = False

    @property
    def confinement(self) -> dict[str, str] | None:
        """The OS confinement layers of the pool in force; None before the first start."""
        if self._active is None:
            return None
        from bridge.functions.worker_pool import WorkerEngine  # imported by the start

        if not isinstance(self._active.engine, WorkerEngine):
            return None
        return self._active.engine.confinement

    @property
    def settings(self) -> PoolSettings | None:
        """The settings of the pool new calls use; None before the first start."""
        return None if self._active is None else self._active.settings

    async def start(self) -> Engine:
        """The pool of the settings in force, started if needed. Raises `EngineUnavailable`."""
        return (await self._current()).engine

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[Engine]:
        """The pool of the settings in force, kept open until the block ends."""
        pool = await self._current()
        pool.calls += 1
        try:
            yield pool.engine
        finally:
            pool.calls -= 1
            if pool.retired and pool.calls == 0:
                self._close_soon(pool)

    async def _current(self) -> _Pool:
        settings = self._settings()
        async with self._starting:
            if self._closed:
                raise EngineUnavailable("the Function engine is shut down")
            active = self._active
            if active is not None and active.settings == settings:
                return active
            # The pool's modules (its worker processes, their protocol) are imported by the
            # first start: a bridge whose Functions never run does not hold them.
            from bridge.functions.worker_pool import WorkerEngine

            engine = await WorkerEngine.start(settings)  # on failure the old pool stays
            self._active = _Pool(engine, settings)
            if active is not None:
                log.info(
                    "Function pool restarted for the new settings (%d workers)", settings.workers
                )
                active.retired = True
                if active.calls == 0:
                    self._close_soon(active)
                else:
                    self._retired.add(active)
            return self._active

    def _close_soon(self, pool: _Pool) -> None:
        self._retired.discard(pool)
        task = asyncio.get_running_loop().create_task(pool.engine.aclose())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        """Close every pool: the one in force and the retired ones still running calls."""
        async with self._starting:
            self._closed = True
            pools = [*self._retired, *([self._active] if self._active is not None else [])]
            self._active = None
            self._retired.clear()
        for pool in pools:
            await pool.engine.aclose()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
