"""The `Engine` the bridge uses: Function isolates hosted by a small pool of worker processes.

Why processes: a V8 fatal error (an invalid-size abort, an out-of-memory abort inside a
builtin) ends the process that hosts the isolate, and cannot be caught there. In a worker it
ends only the call it was running; the bridge answers that call with a stable error code and
starts a replacement.

The shape:
- `workers` processes may run calls at once, one call each; a call that finds all of them busy
  waits (within its workflow limit). One more process is kept started as a spare, so a worker
  lost to a crash or a kill is replaced at once while its successor starts in the background.
- Each worker keeps one hardened isolate made ahead, uses it for one call, then makes the next.
- The pool's own thread runs the invocations' drivers and the pipes, so the bridge's event loop
  only sees host operations and the finished result (as with the in-process engine before).
- A worker whose call was stopped at a limit (or cancelled mid-segment) is killed, not reused:
  V8 may still be inside a builtin that ignores termination and abort later, which would end
  an innocent call. Any other worker is retired (closed and replaced) after
  `RETIRE_AFTER_CALLS` calls or half its lifetime CPU limit.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from bridge.control.function_limits import FunctionLimits
from bridge.functions.crossloop import run_on
from bridge.functions.engine import EngineUnavailable, SandboxProtocolError
from bridge.functions.worker_process import SPAWN_TIMEOUT_S, WorkerLimits, WorkerProcess

logger = logging.getLogger(__name__)
T = TypeVar("T")

RETIRE_AFTER_CALLS = 1_000
_RESPAWN_BACKOFF_S = (1.0, 60.0)
"""First and longest wait before starting a worker again after a start failed."""
_DEFAULT_MEMORY_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class PoolSettings:
    """`workers`: calls at once (one process each); `spare`: processes kept started beyond
    them; `limits`: the OS limits each worker sets on itself."""

    workers: int = 2
    spare: int = 1
    limits: WorkerLimits = WorkerLimits()


def pool_settings(limits: FunctionLimits) -> PoolSettings:
    """The pool `config.yml`'s `functions` section asks for. The data limit is a floor under
    the bridge's resident-memory watch, with room for what V8 reserves (see `worker_main`)."""
    data_mb = max(WorkerLimits().data_mb, 2 * limits.worker_memory_mb)
    return PoolSettings(workers=limits.workers, limits=WorkerLimits(data_mb=data_mb))


class WorkerSandbox:
    """One call's isolate in one worker, which it holds until `dispose`."""

    def __init__(
        self, pool: WorkerEngine, worker: WorkerProcess, heap_bytes: int, memory_bytes: int
    ) -> None:
        self._pool = pool
        self._worker: WorkerProcess | None = worker
        self._heap_bytes = heap_bytes
        self._memory_bytes = memory_bytes

    @property
    def pid(self) -> int | None:
        return self._worker.pid if self._worker is not None else None

    async def evaluate(self, script: str, *, timeout_s: float) -> str | None:
        if not self._pool.is_pool_thread():
            return await self._pool.on_pool(self.evaluate(script, timeout_s=timeout_s))
        worker = self._worker
        if worker is None:
            raise SandboxProtocolError("sandbox already disposed")
        return await worker.evaluate(
            script,
            timeout_s=timeout_s,
            heap_bytes=self._heap_bytes,
            memory_bytes=self._memory_bytes,
        )

    async def evaluate_then(
        self, script: str, follow: str, *, timeout_s: float, repeat_while: str, limit: int
    ) -> str | None:
        if not self._pool.is_pool_thread():
            return await self._pool.on_pool(
                self.evaluate_then(
                    script, follow, timeout_s=timeout_s, repeat_while=repeat_while, limit=limit
                )
            )
        worker = self._worker
        if worker is None:
            raise SandboxProtocolError("sandbox already disposed")
        return await worker.evaluate(
            script,
            timeout_s=timeout_s,
            heap_bytes=self._heap_bytes,
            memory_bytes=self._memory_bytes,
            follow=(follow, repeat_while, limit),
        )

    async def dispose(self) -> None:
        worker, self._worker = self._worker, None
        if worker is None:
            return
        if self._pool.is_pool_thread():
            self._pool.give_back(worker)
        else:
            self._pool.call_soon(self._pool.give_back, worker)


class WorkerEngine:
    """Worker processes behind the `Engine` interface. Start with `await WorkerEngine.start()`."""

    def __init__(self, settings: PoolSettings) -> None:
        self._settings = settings
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mineclaw-functions")
        self._thread.daemon = True
        self._closed = False
        # Created on the pool loop by `_setup`.
        self._idle: asyncio.Queue[WorkerProcess] | None = None
        self._slots: asyncio.Semaphore | None = None
        self._live: set[WorkerProcess] = set()
        self._spawning = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._last_failure = ""
        self._backoff_s = _RESPAWN_BACKOFF_S[0]
        self.replaced = 0
        """Workers started to replace one that died or was killed (benchmarks, tests)."""

    @classmethod
    async def start(cls, settings: PoolSettings | None = None) -> WorkerEngine:
        """Start the pool with its first worker ready. Raises `EngineUnavailable`."""
        pool = cls(settings or PoolSettings())
        pool._thread.start()
        try:
            await pool.on_pool(pool._setup())
        except BaseException:
            await pool.aclose()
            raise
        return pool

    # ---- the Engine interface

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Drive an invocation on the pool thread, next to the pipes it talks through."""
        return await self.on_pool(work)

    async def fresh(self, *, heap_bytes: int, memory_bytes: int | None = None) -> WorkerSandbox:
        return await self.on_pool(self._take(heap_bytes, memory_bytes or _DEFAULT_MEMORY_BYTES))

    async def aclose(self) -> None:
        if self._closed:
            return
        if self._thread.is_alive():
            await self.on_pool(self._shutdown())
        self._closed = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        await asyncio.to_thread(self._thread.join, 5.0)
        if not self._thread.is_alive():
            self._loop.close()

    # ---- helpers for sandboxes, benchmarks and tests

    async def on_pool(self, work: Coroutine[Any, Any, T]) -> T:
        if self._closed:
            work.close()
            raise EngineUnavailable("the Function worker pool is closed")
        return await run_on(self._loop, work)

    def is_pool_thread(self) -> bool:
        return threading.get_ident() == self._thread.ident

    def call_soon(self, callback: Any, *args: Any) -> None:
        if not self._closed:
            self._loop.call_soon_threadsafe(callback, *args)

    async def wait_ready(self) -> None:
        """Wait until every worker and the spare are started and idle."""
        await self.on_pool(self._wait_full())

    async def worker_pids(self) -> list[int]:
        return await self.on_pool(self._pids())

    # ---- the pool thread

    async def _pids(self) -> list[int]:
        return sorted(worker.pid for worker in self._live if worker.alive)

    async def _setup(self) -> None:
        self._idle = asyncio.Queue()
        self._slots = asyncio.Semaphore(self._settings.workers)
        first = await WorkerProcess.spawn(self._settings.limits)
        self._adopt(first)
        self._refill()

    def _target(self) -> int:
        return self._settings.workers + self._settings.spare

    def _adopt(self, worker: WorkerProcess) -> None:
        assert self._idle is not None
        self._live.add(worker)
        self._idle.put_nowait(worker)
        self._track(self._watch(worker))

    async def _watch(self, worker: WorkerProcess) -> None:
        """Whenever a worker exits, for whatever reason, start its successor."""
        await worker.wait_exit()
        self._live.discard(worker)
        if not self._closed:
            self.replaced += 1
            self._refill()

    def _refill(self) -> None:
        if self._closed:
            return
        while len(self._live) + self._spawning < self._target():
            self._spawning += 1
            self._track(self._spawn_one())

    async def _spawn_one(self) -> None:
        try:
            worker = await WorkerProcess.spawn(self._settings.limits)
        except EngineUnavailable as exc:
            # Logged once per distinct failure; retried less and less often.
            if str(exc) != self._last_failure:
                logger.error("could not start a Function worker: %s", exc)
            self._last_failure = str(exc)
            await asyncio.sleep(self._backoff_s)
            self._backoff_s = min(self._backoff_s * 2, _RESPAWN_BACKOFF_S[1])
            self._spawning -= 1
            self._refill()
            return
        self._backoff_s = _RESPAWN_BACKOFF_S[0]
        self._spawning -= 1
        if self._closed:
            await worker.close()
            return
        self._adopt(worker)

    async def _take(self, heap_bytes: int, memory_bytes: int) -> WorkerSandbox:
        assert self._idle is not None and self._slots is not None
        await self._slots.acquire()
        try:
            while True:
                worker = await self._next_idle()
                if worker.alive:
                    return WorkerSandbox(self, worker, heap_bytes, memory_bytes)
        except BaseException:
            self._slots.release()
            raise

    async def _next_idle(self) -> WorkerProcess:
        """The next idle worker; a caller cancelled just as one arrived puts it back."""
        assert self._idle is not None
        getting = asyncio.ensure_future(self._idle.get())
        try:
            await asyncio.wait({getting}, timeout=SPAWN_TIMEOUT_S)
        except asyncio.CancelledError:
            if getting.done() and not getting.cancelled():
                self._idle.put_nowait(getting.result())
            getting.cancel()
            raise
        if not getting.done():
            getting.cancel()
            raise EngineUnavailable(
                f"no Function worker is ready: {self._last_failure or 'none started'}"
            )
        return getting.result()

    def give_back(self, worker: WorkerProcess) -> None:
        """A call ended: its worker goes back to the idle queue or is retired."""
        assert self._idle is not None and self._slots is not None
        self._slots.release()
        worker.release()
        if not worker.alive:
            return  # its watcher starts the successor
        if worker.tainted:
            worker.kill("stopped at a limit")  # its watcher starts the successor
            return
        limits = self._settings.limits
        if worker.calls >= RETIRE_AFTER_CALLS or worker.cpu_seconds() > limits.cpu_s / 2:
            self._live.discard(worker)
            self._track(worker.close())
            self._refill()
            return
        self._idle.put_nowait(worker)

    async def _wait_full(self) -> None:
        assert self._idle is not None
        while self._idle.qsize() < self._target() or self._spawning:
            await asyncio.sleep(0.005)

    def _track(self, work: Coroutine[Any, Any, None]) -> None:
        task = self._loop.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _shutdown(self) -> None:
        self._closed = True
        workers = list(self._live)
        self._live.clear()
        await asyncio.gather(*(worker.close() for worker in workers), return_exceptions=True)
        # Not cancelled: a worker still starting is closed by its own task once it is up, so
        # no process or pipe outlives the pool.
        if self._tasks:
            await asyncio.wait(set(self._tasks))
        # Let the subprocess transports run their connection-lost callbacks (they close the
        # pipes) before the loop stops.
        for _ in range(3):
            await asyncio.sleep(0)
