"""The V8 engine (mini-racer) behind the `Engine` interface.

Why the shape: any synchronous call into a busy isolate blocks the calling thread, and
mini-racer binds each isolate to the asyncio loop it was created on. So every isolate lives on
one private engine thread with its own loop, all traffic is `eval_cancelable` (public API,
returns strings), and the bridge's loop only ever awaits futures from that thread. Cancelling a
wait cancels the engine-side task, and mini-racer terminates the running JavaScript.

Isolates are created ahead (creating one costs a few milliseconds), hardened with the prelude,
handed out once and destroyed after that one invocation; they are never reused.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Coroutine
from typing import Any, TypeVar

from py_mini_racer import (
    JSEvalException,
    JSOOMException,
    JSUndefined,
    MiniRacer,
    init_mini_racer,
)

from bridge.functions.crossloop import run_on
from bridge.functions.engine import (
    EngineUnavailable,
    SandboxMemoryLimit,
    SandboxProtocolError,
    SandboxScriptError,
    SandboxTimeout,
)
from bridge.functions.prelude import PRELUDE

# Process-wide, set once before the first isolate exists. `--disallow-code-generation-from-
# strings` blocks eval, every Function constructor variant and string timers in the engine
# itself; `--jitless` also removes WebAssembly.
V8_FLAGS: tuple[str, ...] = (
    "--single-threaded",
    "--disallow-code-generation-from-strings",
    "--jitless",
)

# Evaluated after the prelude on a probe isolate; the engine refuses to start unless it
# returns "isolated" (another component may have initialised V8 with other flags).
_SELF_CHECK = """
(() => {
  try { (function () {}).constructor("return 1"); return "code generation allowed"; }
  catch (e) { if (!(e instanceof EvalError)) return "unexpected " + e; }
  for (const name of ["eval", "WebAssembly", "ArrayBuffer", "SharedArrayBuffer", "Atomics",
                      "setTimeout", "console"]) {
    if (typeof globalThis[name] !== "undefined") return name + " present";
  }
  return "isolated";
})()
"""

_PRELUDE_TIMEOUT_S = 5.0
logger = logging.getLogger(__name__)
T = TypeVar("T")


class V8Sandbox:
    """One isolate, on the engine thread. Used for one invocation."""

    def __init__(self, engine: V8Engine, racer: MiniRacer) -> None:
        self._engine = engine
        self._racer: MiniRacer | None = racer
        self._in_flight = 0
        self._settled: asyncio.Event | None = None  # created on the engine loop

    async def evaluate(self, script: str, *, timeout_s: float) -> str | None:
        if self._engine.is_engine_thread():
            return await self._evaluate(script, timeout_s)
        return await self._engine.on_engine(self._evaluate(script, timeout_s))

    async def evaluate_then(
        self, script: str, follow: str, *, timeout_s: float, repeat_while: str, limit: int
    ) -> str | None:
        await self.evaluate(script, timeout_s=timeout_s)
        value = None
        for _ in range(limit):
            value = await self.evaluate(follow, timeout_s=timeout_s)
            if value != repeat_while:
                break
        return value

    async def dispose(self) -> None:
        # Not awaited to the end: freeing a context blocks the engine thread for a millisecond
        # or two, which the caller need not wait for. The engine keeps track of it.
        racer, self._racer = self._racer, None
        if racer is not None:
            self._engine.retire(self._close_when_settled(racer))

    async def _evaluate(self, script: str, timeout_s: float) -> str | None:
        racer = self._racer
        if racer is None:
            raise SandboxProtocolError("sandbox already disposed")
        self._in_flight += 1
        try:
            value = await self._bounded(racer, script, timeout_s)
        except TimeoutError as exc:
            raise SandboxTimeout(f"synchronous segment ran over {timeout_s * 1000:.0f} ms") from exc
        except JSOOMException as exc:
            raise SandboxMemoryLimit("heap limit reached") from exc
        except JSEvalException as exc:
            if racer.was_hard_memory_limit_reached():
                raise SandboxMemoryLimit("heap limit reached") from exc
            raise SandboxScriptError(str(exc)[:2_000]) from exc
        finally:
            self._in_flight -= 1
            if self._in_flight == 0 and self._settled is not None:
                self._settled.set()
        # The limit can also be reached in the microtask checkpoint that follows an evaluation;
        # V8 then terminates that checkpoint silently, so the flag is checked every time.
        if racer.was_hard_memory_limit_reached():
            raise SandboxMemoryLimit("heap limit reached")
        if isinstance(value, str):
            return value
        if value is JSUndefined or value is None:
            return None
        raise SandboxProtocolError(f"script produced {type(value).__name__}, not a string")

    async def _bounded(self, racer: MiniRacer, script: str, timeout_s: float) -> Any:
        """`eval_cancelable` within `timeout_s` of this thread's time. Time the engine thread
        spent blocked creating or freeing isolates is added back: it belongs to no segment,
        and counting it would fail healthy Functions whenever many calls start at once."""
        loop = asyncio.get_running_loop()
        work = loop.create_task(racer.eval_cancelable(script))
        blocked_seen = self._engine.blocked_s
        deadline = loop.time() + timeout_s
        try:
            while True:
                remaining = deadline - loop.time()
                if remaining > 0:
                    await asyncio.wait({work}, timeout=remaining)
                # A result that arrived while the loop was blocked wins over the timer.
                if work.done():
                    return work.result()
                blocked = self._engine.blocked_s - blocked_seen
                if blocked <= 0:
                    raise TimeoutError
                deadline += blocked
                blocked_seen += blocked
        finally:
            if not work.done():
                # Cancelling the task makes mini-racer terminate the running JavaScript.
                work.cancel()
                await asyncio.wait({work})

    async def _close_when_settled(self, racer: MiniRacer) -> None:
        # A cancelled evaluation still has to run its own cleanup (which terminates the
        # JavaScript) before the context may be freed.
        while self._in_flight:
            self._settled = asyncio.Event()
            await self._settled.wait()
        self._engine.close_racer(racer)
        self._engine.released()


class V8Engine:
    """Fresh V8 isolates on a private thread. Start with `await V8Engine.start()`."""

    def __init__(self, *, ahead: int = 4, nice: int = 10) -> None:
        self._ahead = ahead
        self._nice = nice
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="mineclaw-v8", daemon=True)
        self._ready: deque[MiniRacer] = deque()
        self._refill: asyncio.Task[None] | None = None
        self._retiring: set[asyncio.Task[None]] = set()
        self._closed = False
        self._active = 0  # isolates handed out and not yet freed
        self.blocked_s = 0.0
        """Seconds the engine thread spent in synchronous isolate creation and freeing."""
        self._idle: asyncio.Event | None = None  # set when _active drops to zero

    @classmethod
    async def start(cls, *, ahead: int = 4, nice: int = 10) -> V8Engine:
        """Start the engine thread and run the isolation self-check.

        `ahead` is how many hardened isolates are kept ready. `nice` lowers the scheduling
        priority of the engine thread and, by inheritance, of every isolate thread it starts
        (Linux only; 0 keeps the bridge's priority). Raises `EngineUnavailable`.
        """
        engine = cls(ahead=ahead, nice=nice)
        engine._thread.start()
        try:
            verdict = await engine.on_engine(engine._self_check())
        except Exception:
            await engine.aclose()
            raise
        if verdict != "isolated":
            await engine.aclose()
            raise EngineUnavailable(f"V8 isolation self-check failed: {verdict}")
        return engine

    async def on_engine(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` on the engine thread; cancelling the caller cancels it there."""
        if self._closed:
            work.close()
            raise EngineUnavailable("the V8 engine is closed")
        return await run_on(self._loop, work)

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run an invocation's driver on the engine thread: its evaluations then need no
        thread hop (each hop costs more than the evaluation itself)."""
        return await self.on_engine(work)

    def is_engine_thread(self) -> bool:
        return threading.get_ident() == self._thread.ident

    def retire(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` (freeing an isolate) on the engine thread without waiting for it."""
        if self._closed:
            work.close()
            return
        self._loop.call_soon_threadsafe(self._track_retiring, work)

    async def wait_ready(self) -> None:
        """Wait until the isolates made ahead are all there (benchmarks and tests)."""
        await self.on_engine(self._wait_full())

    async def fresh(
        self,
        *,
        heap_bytes: int,
        memory_bytes: int | None = None,
        tenant: str = "",
        value_chars: int | None = None,
    ) -> V8Sandbox:
        racer = await self.on_engine(self._take(heap_bytes))
        return V8Sandbox(self, racer)

    async def aclose(self) -> None:
        if self._closed:
            return
        if self._thread.is_alive():
            await self.on_engine(self._shutdown())
        self._closed = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        await asyncio.to_thread(self._thread.join, 5.0)
        if not self._thread.is_alive():
            self._loop.close()

    # The methods below run on the engine thread.

    def _serve(self) -> None:
        # A runaway isolate spins a CPU until its segment limit; on a small machine ten of them
        # would take the CPUs from the bridge's own loop. Threads inherit the nice value of the
        # thread that starts them, and every isolate thread is started from this one. On Linux
        # PRIO_PROCESS with a thread id changes only that thread.
        if self._nice and sys.platform == "linux":
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self._nice)
            except OSError:
                logger.warning("could not lower the V8 engine thread's priority")
        self._loop.run_forever()

    async def _self_check(self) -> str:
        try:
            init_mini_racer(flags=V8_FLAGS, ignore_duplicate_init=True)
            racer = await self._create()
        except Exception as exc:
            raise EngineUnavailable(f"V8 could not start: {exc}") from exc
        try:
            verdict = await racer.eval_cancelable(_SELF_CHECK)
        finally:
            racer.close()
        self._start_refill()
        return str(verdict)

    async def _create(self) -> MiniRacer:
        # The constructor blocks this thread briefly while the new isolate installs
        # mini-racer's timer shim, which the prelude then removes.
        started = time.perf_counter()
        racer = MiniRacer()
        self.blocked_s += time.perf_counter() - started
        try:
            await asyncio.wait_for(racer.eval_cancelable(PRELUDE), _PRELUDE_TIMEOUT_S)
        except BaseException:
            self.close_racer(racer)
            raise
        return racer

    def close_racer(self, racer: MiniRacer) -> None:
        """Free an isolate (engine thread only); blocks this thread for a moment."""
        started = time.perf_counter()
        racer.close()
        self.blocked_s += time.perf_counter() - started

    def released(self) -> None:
        """An isolate handed out was freed (engine thread only)."""
        self._active -= 1
        if self._active == 0 and self._idle is not None:
            self._idle.set()

    def _track_retiring(self, work: Coroutine[Any, Any, None]) -> None:
        task = self._loop.create_task(work)
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

    async def _wait_full(self) -> None:
        self._start_refill()
        while len(self._ready) < self._ahead:
            await asyncio.sleep(0.001)

    async def _take(self, heap_bytes: int) -> MiniRacer:
        if self._ready:
            racer = self._ready.popleft()
        else:
            try:
                racer = await self._create()
            except Exception as exc:
                raise EngineUnavailable(f"could not create a V8 isolate: {exc}") from exc
        racer.set_hard_memory_limit(heap_bytes)
        self._active += 1
        self._start_refill()
        return racer

    def _start_refill(self) -> None:
        if self._refill is None or self._refill.done():
            self._refill = asyncio.get_running_loop().create_task(self._fill())

    async def _fill(self) -> None:
        while len(self._ready) < self._ahead:
            # Creating an isolate blocks this thread for a few milliseconds, so while some
            # are still ready, wait for a moment when no invocation is running.
            while self._ready and self._active:
                self._idle = asyncio.Event()
                await self._idle.wait()
            try:
                self._ready.append(await self._create())
            except Exception:  # noqa: BLE001 - the next call creates its own and reports it
                logger.exception("could not create a V8 isolate ahead")
                return
            await asyncio.sleep(0)

    async def _shutdown(self) -> None:
        if self._retiring:
            await asyncio.wait(set(self._retiring))
        if self._refill is not None:
            self._refill.cancel()
            try:
                await self._refill
            except asyncio.CancelledError:
                pass
        while self._ready:
            self.close_racer(self._ready.popleft())
