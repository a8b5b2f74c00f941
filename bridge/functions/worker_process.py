"""One Function worker process seen from the bridge: spawn, frames, watch, kill, post-mortem.

The bridge never trusts the worker to stop itself. While a segment runs, the bridge waits for
the answer no longer than the segment's limit plus `ANSWER_GRACE_S`, and polls the worker's
resident memory (`/proc/PID/statm`, so memory V8 allocates outside its heap counts too) every
`POLL_S`. Past either limit the worker is killed with SIGKILL and the call ends with
`sync_time_limit` or `memory_limit`. A worker that dies on its own is classified from its exit
status and the tail of its stderr (V8 prints its fatal error there): `memory_limit` for an
out-of-memory abort or a kill by the system, `engine_crashed` for anything else.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import signal
import sys

from bridge.functions.engine import (
    EngineCrashed,
    EngineUnavailable,
    SandboxError,
    SandboxMemoryLimit,
    SandboxProtocolError,
    SandboxResultTooLarge,
    SandboxScriptError,
    SandboxTimeout,
)
from bridge.functions.pool_settings import WorkerLimits
from bridge.functions.worker_protocol import (
    HEADER_BYTES,
    MAX_VALUE_CHARS,
    Answer,
    Eval,
    Fatal,
    FrameError,
    Ready,
    Release,
    Terminate,
    answer_cap,
    body_length,
    decode_from_worker,
    encode,
)

logger = logging.getLogger(__name__)

ANSWER_GRACE_S = 0.1
"""How long past a limit the bridge waits for the worker's own answer before killing it."""
POLL_S = 0.005
"""Resident-memory poll interval while a segment runs (memory only grows while JS runs)."""
SPAWN_TIMEOUT_S = 15.0
_STDERR_TAIL = 8_192
_PAGE = os.sysconf("SC_PAGE_SIZE")
_TICKS = os.sysconf("SC_CLK_TCK")

# What an answer's error_code may be, and what the bridge makes of it. Anything else is a
# broken worker.
_ANSWER_ERRORS: dict[str, type[SandboxError]] = {
    "script_error": SandboxScriptError,
    "sync_time_limit": SandboxTimeout,
    "memory_limit": SandboxMemoryLimit,
    "protocol_error": SandboxProtocolError,
    "engine_unavailable": EngineUnavailable,
    "result_too_large": SandboxResultTooLarge,
}


def worker_argv(limits: WorkerLimits, *, start_nice: int = 0) -> list[str]:
    """The command line of a worker (its environment is always empty: see `spawn`)."""
    module = "bridge.functions.worker_main"
    sizes = [str(limits.data_mb), str(limits.cpu_s), str(start_nice)]
    return [sys.executable, "-I", "-m", module, *sizes]


class _WorkerDied(Exception):
    pass


class WorkerProcess:
    """A started worker; create with `await WorkerProcess.spawn(...)`. Serves one call at a time."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process
        self.pid = process.pid
        self.calls = 0
        self.tainted = False
        """An isolate in it was stopped at a limit: V8 may still be busy finishing a builtin
        (and may yet abort), so the worker must not serve another call."""
        self.killed_for: str | None = None
        self.confinement: dict[str, str] = {}
        """Each OS confinement layer, as the worker reported it at `ready`."""
        self.retiring = False
        """Closed on purpose (retired, surplus, shutdown): its exit is not a loss."""
        self._seq = itertools.count()
        self._waiting: tuple[int, asyncio.Future[Answer]] | None = None
        self._answer_cap = answer_cap(MAX_VALUE_CHARS)
        """The largest frame read now: set from each segment's `value_chars`."""
        self._tail = bytearray()
        self._exit: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._tasks: set[asyncio.Task[None]] = set()

    @classmethod
    async def spawn(cls, limits: WorkerLimits, *, background: bool = False) -> WorkerProcess:
        """Start a worker and wait for its `ready`; `EngineUnavailable` if it never comes.

        `background`: nothing waits for this one (it refills the spares), so it starts at the
        lowest priority and takes no CPU from calls running meanwhile."""
        process = await asyncio.create_subprocess_exec(
            *worker_argv(limits, start_nice=19 if background else 0),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={},  # no secrets: the bridge's environment holds provider keys
            close_fds=True,
            # A process group of its own, so a ^C meant for the bridge is not delivered to
            # workers; but the bridge's session: with Linux's autogroup (on by default) each
            # session is a scheduling group of its own, weighed against the whole bridge, so a
            # worker's niceness 19 counted only inside it and a busy Function took a core's
            # fair share from the bridge's loop. Confined, a worker opens no terminal.
            process_group=0,
        )
        worker = cls(process)
        worker._track(worker._drain_stderr())
        try:
            first = await asyncio.wait_for(worker._read_frame(), SPAWN_TIMEOUT_S)
        except (TimeoutError, asyncio.IncompleteReadError, FrameError) as exc:
            worker.kill("start failed")
            await worker.wait_exit()
            raise EngineUnavailable(
                f"a Function worker did not start: {worker.fatal_line()}"
            ) from exc
        except BaseException:
            worker.kill("start cancelled")
            await worker.wait_exit()
            raise
        if not isinstance(first, Ready) or first.pid != process.pid:
            worker.kill("start failed")
            reason = first.message if isinstance(first, Fatal) else "it did not say ready"
            raise EngineUnavailable(f"a Function worker did not start: {reason}")
        worker.confinement = dict(first.confinement)
        worker._track(worker._read_answers())
        return worker

    @property
    def alive(self) -> bool:
        return not self._exit.done() and self.killed_for is None

    def rss_bytes(self) -> int | None:
        """Resident memory, or None once the process is gone."""
        try:
            with open(f"/proc/{self.pid}/statm", "rb") as statm:
                return int(statm.read().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            return None

    def cpu_seconds(self) -> float:
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / _TICKS
        except (OSError, ValueError, IndexError):
            return 0.0

    async def evaluate(
        self,
        script: str,
        *,
        timeout_s: float,
        heap_bytes: int,
        memory_bytes: int,
        follow: tuple[str, str, int] | None = None,
        value_chars: int = MAX_VALUE_CHARS,
    ) -> str | None:
        """One segment, watched as described above. Raises a `SandboxError`.

        `follow` is `(script, repeat_while, limit)` for `Sandbox.evaluate_then`. Those segments
        are meant to be quick (the runtime's steps): the exchange as a whole gets two segment
        limits before the worker is killed."""
        loop = asyncio.get_running_loop()
        if not self.alive:
            raise self._lost_error()
        seq = next(self._seq)
        answer: asyncio.Future[Answer] = loop.create_future()
        self._waiting = (seq, answer)
        frame = Eval(
            seq=seq,
            script=script,
            timeout_ms=max(1, round(timeout_s * 1000)),
            heap_bytes=heap_bytes,
            value_chars=value_chars,
        )
        self._answer_cap = answer_cap(value_chars)
        if follow is not None:
            frame = frame.model_copy(
                update={"follow": follow[0], "repeat_while": follow[1], "follow_limit": follow[2]}
            )
        allowed_s = timeout_s * (1 if follow is None else 2)
        try:
            self._write(encode(frame))
            deadline = loop.time() + allowed_s + ANSWER_GRACE_S
            while not answer.done():
                remaining = deadline - loop.time()
                if remaining <= 0:
                    self.kill("time limit")
                    raise self._with_lost(
                        SandboxTimeout(f"segment ran over {timeout_s * 1000:.0f} ms")
                    )
                await asyncio.wait({answer}, timeout=min(POLL_S, remaining))
                self._check_memory(memory_bytes)
        except asyncio.CancelledError:
            self.tainted = True
            await self._terminate(seq, answer)
            raise
        except FrameError as exc:
            self.kill("protocol")
            crash = EngineCrashed(f"the worker could not be sent the segment: {exc}")
            raise self._with_lost(crash) from exc
        finally:
            self._waiting = None
        try:
            reply = answer.result()
        except _WorkerDied:
            raise self._lost_error() from None
        self._check_memory(memory_bytes)
        if reply.ok:
            return reply.value
        error: type[SandboxError] | None = _ANSWER_ERRORS.get(reply.error_code or "")
        if error is None:
            self.kill("protocol")
            raise self._with_lost(EngineCrashed(f"the worker answered {reply.error_code!r}"))
        if error in (SandboxTimeout, SandboxMemoryLimit):
            # V8 may still be inside a builtin that ignores termination, and may yet abort:
            # the worker serves no other call.
            self.kill("stopped at a limit")
            raise self._with_lost(error(reply.message))
        raise error(reply.message)

    def release(self) -> None:
        """The call is over; the worker disposes of its isolate and makes the next one."""
        if self.alive:
            self.calls += 1
            self._write(encode(Release()))

    def kill(self, reason: str) -> None:
        """SIGKILL, recording why (the first reason wins)."""
        if self.killed_for is None:
            self.killed_for = reason
        if not self._exit.done():
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()

    async def close(self) -> None:
        """End the worker: close its pipe, then kill it if it does not exit at once."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            await asyncio.wait_for(asyncio.shield(self._exit), 1.0)
        except TimeoutError:
            self.kill("shutdown")
            await self.wait_exit()
        # Both end by themselves once the process is gone and its pipes are at EOF.
        if self._tasks:
            await asyncio.wait(set(self._tasks))

    async def wait_exit(self) -> int:
        return await asyncio.shield(self._exit)

    def fatal_line(self) -> str:
        """The most telling line of the worker's stderr (V8's fatal-error headline)."""
        text = self._tail.decode("utf-8", "replace")
        lines = [line.strip(" #") for line in text.splitlines() if line.strip(" #")]
        for index, line in enumerate(lines):
            if "Fatal" in line or "Error" in line or "error" in line:
                # V8 sometimes heads its report with a line ending in ":"; say what follows.
                if line.endswith(":") and index + 1 < len(lines):
                    line = f"{line} {lines[index + 1]}"
                return line[:300]
        return lines[-1][:300] if lines else "no diagnostics"

    # ---- internals

    def _check_memory(self, memory_bytes: int) -> None:
        rss = self.rss_bytes()
        if rss is not None and rss > memory_bytes and self.alive:
            self.kill("memory limit")
            raise self._with_lost(
                SandboxMemoryLimit(
                    f"the worker used {rss // 2**20} MB, over {memory_bytes // 2**20} MB"
                )
            )

    async def _terminate(self, seq: int, answer: asyncio.Future[Answer]) -> None:
        """The call was cancelled mid-segment: ask the worker to stop, kill it if it does not."""
        if answer.done() or not self.alive:
            return
        self._write(encode(Terminate(seq=seq)))
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(asyncio.shield(answer), ANSWER_GRACE_S)
        if not answer.done():
            self.kill("did not stop when cancelled")
            logger.warning("Function worker %d killed: it did not stop when cancelled", self.pid)

    def _write(self, data: bytes) -> None:
        stdin = self._process.stdin
        if stdin is None or stdin.is_closing():
            return
        stdin.write(data)

    def _with_lost(self, error: SandboxError) -> SandboxError:
        error.lost = {"pid": self.pid, "reason": self.killed_for or "died"}
        logger.warning("Function worker %d killed: %s", self.pid, self.killed_for)
        return error

    def _lost_error(self) -> SandboxError:
        """The error for a call whose worker died under it."""
        code = self._exit.result() if self._exit.done() else None
        detail = self.fatal_line()
        error: SandboxError
        if self.killed_for == "memory limit":
            error = SandboxMemoryLimit("the worker passed its memory limit")
        elif self.killed_for == "time limit":
            error = SandboxTimeout("the segment ran past its limit")
        elif "out of memory" in detail.lower():
            error = SandboxMemoryLimit(f"V8 ran out of memory: {detail}")
        elif code == -signal.SIGKILL and self.killed_for is None:
            error = SandboxMemoryLimit("the system killed the worker (most likely out of memory)")
        elif code == -signal.SIGXCPU:
            error = EngineCrashed("the worker used up its CPU time limit")
        else:
            error = EngineCrashed(f"the engine crashed: {detail}")
        error.lost = {
            "pid": self.pid,
            "reason": self.killed_for or "died",
            "exit": _describe_exit(code),
            "detail": detail,
        }
        logger.warning(
            "Function worker %d died (%s, %s): %s",
            self.pid,
            self.killed_for or "on its own",
            _describe_exit(code),
            detail,
        )
        return error

    def _track(self, work: object) -> None:
        assert asyncio.iscoroutine(work)
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _read_frame(self) -> Ready | Answer | Fatal:
        stdout = self._process.stdout
        assert stdout is not None
        header = await stdout.readexactly(HEADER_BYTES)
        # Checked before the body is read: an answer larger than its segment's value can make
        # is never read, let alone parsed (a compromised worker; the honest one refuses first).
        return decode_from_worker(await stdout.readexactly(body_length(header, self._answer_cap)))

    async def _read_answers(self) -> None:
        try:
            while True:
                frame = await self._read_frame()
                waiting = self._waiting
                if (
                    isinstance(frame, Answer)
                    and waiting is not None
                    and waiting[0] == frame.seq
                    and not waiting[1].done()
                ):
                    waiting[1].set_result(frame)
                # Anything else (a late answer to a terminated segment) is stale: ignored.
        except (asyncio.IncompleteReadError, FrameError, ConnectionError) as exc:
            if isinstance(exc, FrameError):
                self.kill("protocol")
                logger.warning("Function worker %d sent a bad frame: %s", self.pid, exc)
        await self.wait_exit()
        waiting = self._waiting
        if waiting is not None and not waiting[1].done():
            waiting[1].set_exception(_WorkerDied())

    async def _drain_stderr(self) -> None:
        # Always read, so V8's long fatal-error report can never block the worker on a full
        # pipe; keep only the tail.
        stderr = self._process.stderr
        assert stderr is not None
        while chunk := await stderr.read(4_096):
            self._tail += chunk
            del self._tail[:-_STDERR_TAIL]
        code = await self._process.wait()
        if not self._exit.done():
            self._exit.set_result(code)


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "running"
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit {code}"
