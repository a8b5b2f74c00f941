"""The `Engine` the bridge uses: Function isolates hosted by a small pool of worker processes.

Why processes: a V8 fatal error (an invalid-size abort, an out-of-memory abort inside a
builtin) ends the process that hosts the isolate, and cannot be caught there. In a worker it
ends only the call it was running; the bridge answers that call with a stable error code and
starts a replacement.

The shape:
- Each call holds one worker process for its whole life, also while its script only awaits
  host work (an approval prompt, a native tool, a dispatch). So that such a wait holds nothing
  another player needs, the pool grows on demand: `workers` processes are kept started while
  the pool is idle, and as calls take them the pool starts more, up to `max_workers` calls at
  once. `spare` more processes are always kept started beyond the calls running, so a call
  finds a ready worker instead of waiting for one to start, and a worker lost to a crash or a
  kill is replaced at once while its successor starts in the background. Once the load has
  dropped for `trim_after_s`, the idle workers beyond that are closed (not at once: a burst of
  calls would otherwise close and start workers over and over).
- One player (the `tenant` of a call) holds at most `tenant_share` workers at once; their next
  call waits for one of their own to end. A call that gets no worker within `wait_s` ends
  with `workers_busy` (its message says whether the pool or the player's share was full).
- A worker lost to a crash or a kill is replaced at once the first times; when losses come in
  a run (a crash loop), each replacement waits longer (`crash_delay`), so a loop of crashing
  calls cannot keep the machine busy starting workers.
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
import collections
import contextlib
import logging
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

from bridge.functions.crossloop import run_on
from bridge.functions.engine import EngineUnavailable, SandboxProtocolError, WorkersBusy
from bridge.functions.pool_settings import PoolSettings
from bridge.functions.worker_confinement import ON, describe
from bridge.functions.worker_process import WorkerProcess
from bridge.functions.worker_protocol import MAX_VALUE_CHARS

logger = logging.getLogger(__name__)
T = TypeVar("T")

RETIRE_AFTER_CALLS = 1_000
_RESPAWN_BACKOFF_S = (1.0, 60.0)
"""First and longest wait before starting a worker again after a start failed."""
_DEFAULT_MEMORY_BYTES = 256 * 1024 * 1024
LOSS_WINDOW_S = 30.0
"""Worker losses within this long of each other count as one run (see `crash_delay`)."""
_FREE_LOSSES = 2
_MAX_CRASH_DELAY_S = 15.0


def crash_delay(recent_losses: int) -> float:
    """How long a replacement waits after the `recent_losses`-th loss within `LOSS_WINDOW_S`:
    nothing for the first two (a crash now and then is replaced at once), then a quarter
    second doubling with each further loss, at most 15 s."""
    if recent_losses <= _FREE_LOSSES:
        return 0.0
    return min(0.25 * 2.0 ** (recent_losses - _FREE_LOSSES - 1), _MAX_CRASH_DELAY_S)


class WorkerSandbox:
    """One call's isolate in one worker, which it holds until `dispose`."""

    def __init__(
        self,
        pool: WorkerEngine,
        worker: WorkerProcess,
        heap_bytes: int,
        memory_bytes: int,
        tenant: str,
        value_chars: int,
    ) -> None:
        self._pool = pool
        self._tenant = tenant
        self._value_chars = value_chars
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
            value_chars=self._value_chars,
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
            value_chars=self._value_chars,
        )

    async def dispose(self) -> None:
        worker, self._worker = self._worker, None
        if worker is None:
            return
        if self._pool.is_pool_thread():
            self._pool.give_back(worker, self._tenant)
        else:
            self._pool.call_soon(self._pool.give_back, worker, self._tenant)


class WorkerEngine:
    """Worker processes behind the `Engine` interface. Start with `await WorkerEngine.start()`."""

    def __init__(self, settings: PoolSettings) -> None:
        self._settings = settings
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mineclaw-functions")
        self._thread.daemon = True
        self._closed = False
        self._idle: collections.deque[WorkerProcess] = collections.deque()
        self._changed: asyncio.Event | None = None  # created on the pool loop by `_setup`
        self._busy = 0
        self._held: dict[str, int] = {}
        """Workers held per tenant (player)."""
        self._wanting = 0
        """Calls waiting that only lack an idle worker (the pool grows for them)."""
        self._losses: collections.deque[float] = collections.deque()
        self._trimming = False
        self._trim: asyncio.Task[None] | None = None
        self._live: set[WorkerProcess] = set()
        self._spawning = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._last_failure = ""
        self._backoff_s = _RESPAWN_BACKOFF_S[0]
        self.confinement: dict[str, str] = {}
        """The OS confinement layers of the first worker started, as it reported them."""
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

    async def fresh(
        self,
        *,
        heap_bytes: int,
        memory_bytes: int | None = None,
        tenant: str = "",
        value_chars: int | None = None,
    ) -> WorkerSandbox:
        memory = memory_bytes or _DEFAULT_MEMORY_BYTES
        chars = min(value_chars or MAX_VALUE_CHARS, MAX_VALUE_CHARS)
        return await self.on_pool(self._take(heap_bytes, memory, tenant, chars))

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

    async def busy(self) -> int:
        """Workers running a call now (tests, benchmarks)."""
        return await self.on_pool(self._count_busy())

    # ---- the pool thread

    async def _pids(self) -> list[int]:
        return sorted(worker.pid for worker in self._live if worker.alive)

    async def _count_busy(self) -> int:
        return self._busy

    async def _setup(self) -> None:
        self._changed = asyncio.Event()
        first = await WorkerProcess.spawn(self._settings.limits)
        self._adopt(first)
        self._refill()

    def _target(self) -> int:
        """Processes wanted now: the calls running and those waiting for an idle worker (at
        least `workers`, at most `max_workers`), plus the spares."""
        settings = self._settings
        running = min(max(settings.workers, self._busy + self._wanting), settings.cap)
        return running + settings.spare

    def _notify(self) -> None:
        """Wake every call waiting for a worker: something changed."""
        if self._changed is not None:
            self._changed.set()
            self._changed = asyncio.Event()

    def _adopt(self, worker: WorkerProcess) -> None:
        if not self.confinement:
            self.confinement = dict(worker.confinement)
            logger.info("Function worker confinement: %s", describe(self.confinement))
            for name, state in self.confinement.items():
                if state != ON and not state.startswith(ON + " "):
                    logger.warning("Function worker confinement layer %s is %s", name, state)
        self._live.add(worker)
        self._idle.append(worker)
        self._track(self._watch(worker))
        self._notify()

    async def _watch(self, worker: WorkerProcess) -> None:
        """Whenever a worker exits, for whatever reason, start its successor; after a loss in
        a run of losses, not at once (`crash_delay`)."""
        await worker.wait_exit()
        self._live.discard(worker)
        with contextlib.suppress(ValueError):
            self._idle.remove(worker)
        if self._closed:
            return
        self.replaced += 1
        delay = 0.0
        if not worker.retiring:
            now = time.monotonic()
            self._losses.append(now)
            while self._losses and now - self._losses[0] > LOSS_WINDOW_S:
                self._losses.popleft()
            delay = crash_delay(len(self._losses))
        if delay:
            logger.warning(
                "%d Function workers lost in %.0f s: the next starts in %.2f s",
                len(self._losses),
                LOSS_WINDOW_S,
                delay,
            )
            self._spawning += 1  # counted now, so nothing else starts one meanwhile
            self._track(self._spawn_one(delay))
        self._refill()
        self._notify()

    def _refill(self) -> None:
        if self._closed:
            return
        while len(self._live) + self._spawning < self._target():
            self._spawning += 1
            self._track(self._spawn_one())

    async def _spawn_one(self, delay: float = 0.0) -> None:
        if delay:
            await asyncio.sleep(delay)
            if self._closed:
                self._spawning -= 1
                return
        # Only a call waiting for a worker makes a start urgent; a spare refilled while enough
        # are idle starts at the lowest priority, beside the calls running.
        background = not self._wanting and len(self._idle) >= self._settings.spare
        try:
            worker = await WorkerProcess.spawn(self._settings.limits, background=background)
        except EngineUnavailable as exc:
            # Logged once per distinct failure; retried less and less often.
            if str(exc) != self._last_failure:
                logger.error("could not start a Function worker: %s", exc)
            self._last_failure = str(exc)
            await asyncio.sleep(self._backoff_s)
            self._backoff_s = min(self._backoff_s * 2, _RESPAWN_BACKOFF_S[1])
            self._spawning -= 1
            self._refill()
            self._notify()
            return
        self._backoff_s = _RESPAWN_BACKOFF_S[0]
        self._spawning -= 1
        if self._closed:
            await worker.close()
            return
        self._adopt(worker)

    async def _take(
        self, heap_bytes: int, memory_bytes: int, tenant: str, value_chars: int
    ) -> WorkerSandbox:
        """A worker for one call of `tenant`, within its share and `wait_s`. Waiting callers
        are woken on every change; each checks again (the event loop serves them in order)."""
        settings = self._settings
        loop = asyncio.get_running_loop()
        deadline = loop.time() + settings.wait_s
        wanting = False
        try:
            while True:
                eligible = self._held.get(tenant, 0) < settings.share and self._busy < settings.cap
                worker = self._pop_idle() if eligible else None
                if worker is not None:
                    self._busy += 1
                    self._held[tenant] = self._held.get(tenant, 0) + 1
                    if wanting:
                        self._wanting -= 1
                        wanting = False
                    self._refill()  # keep the spares while this call runs
                    return WorkerSandbox(
                        self, worker, heap_bytes, memory_bytes, tenant, value_chars
                    )
                if eligible != wanting:
                    self._wanting += 1 if eligible else -1
                    wanting = eligible
                    self._refill()
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise self._no_worker(tenant)
                changed = self._changed
                assert changed is not None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), remaining)
        finally:
            if wanting:
                self._wanting -= 1

    def _pop_idle(self) -> WorkerProcess | None:
        while self._idle:
            worker = self._idle.popleft()
            if worker.alive:
                return worker
        return None

    def _no_worker(self, tenant: str) -> EngineUnavailable | WorkersBusy:
        settings = self._settings
        if not self._live and self._last_failure:
            return EngineUnavailable(f"no Function worker is ready: {self._last_failure}")
        waited = f"waited {settings.wait_s:g} s"
        if self._held.get(tenant, 0) >= settings.share:
            return WorkersBusy(
                f"this player already runs {settings.share} Function calls, the most one player "
                f"may run at once ({waited})"
            )
        if self._busy >= settings.cap:
            return WorkersBusy(
                f"all {settings.cap} Function workers are busy with other calls ({waited})"
            )
        return WorkersBusy(f"no Function worker finished starting in time ({waited})")

    def give_back(self, worker: WorkerProcess, tenant: str) -> None:
        """A call ended: its worker goes back to the idle queue, or is retired or closed."""
        self._busy -= 1
        held = self._held.get(tenant, 0) - 1
        if held > 0:
            self._held[tenant] = held
        else:
            self._held.pop(tenant, None)
        try:
            self._give_back(worker)
        finally:
            self._notify()

    def _give_back(self, worker: WorkerProcess) -> None:
        worker.release()
        if not worker.alive:
            return  # its watcher starts the successor
        if worker.tainted:
            worker.kill("stopped at a limit")  # its watcher starts the successor
            return
        limits = self._settings.limits
        if worker.calls >= RETIRE_AFTER_CALLS or worker.cpu_seconds() > limits.cpu_s / 2:
            self._retire(worker)
            self._refill()
            return
        self._idle.append(worker)
        if not self._trimming and len(self._live) + self._spawning > self._target():
            self._trimming = True
            self._trim = self._loop.create_task(self._trim_later())

    async def _trim_later(self) -> None:
        """Close the idle workers the load has not needed for `trim_after_s`."""
        try:
            await asyncio.sleep(self._settings.trim_after_s)
            while (
                not self._closed
                and self._idle
                and len(self._live) + self._spawning > self._target()
            ):
                self._retire(self._idle.popleft())
        finally:
            self._trimming = False

    def _retire(self, worker: WorkerProcess) -> None:
        worker.retiring = True
        self._live.discard(worker)
        self._track(worker.close())

    async def _wait_full(self) -> None:
        while len(self._idle) < self._target() - self._busy or self._spawning:
            await asyncio.sleep(0.005)

    def _track(self, work: Coroutine[Any, Any, None]) -> None:
        task = self._loop.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _shutdown(self) -> None:
        self._closed = True
        workers = list(self._live)
        self._live.clear()
        for worker in workers:
            worker.retiring = True
        self._notify()
        if self._trim is not None:
            self._trim.cancel()
            await asyncio.wait({self._trim})
        await asyncio.gather(*(worker.close() for worker in workers), return_exceptions=True)
        # Not cancelled: a worker still starting is closed by its own task once it is up, so
        # no process or pipe outlives the pool.
        if self._tasks:
            await asyncio.wait(set(self._tasks))
        # Let the subprocess transports run their connection-lost callbacks (they close the
        # pipes) before the loop stops.
        for _ in range(3):
            await asyncio.sleep(0)
