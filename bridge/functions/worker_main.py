"""A Function worker process: `python -I -m bridge.functions.worker_main DATA_MB CPU_S NICE`.

Started by `worker_pool.py` with a clean environment and only its three standard descriptors
(stdin and stdout are the protocol pipe, stderr diagnostics). Before anything loads V8 it sets
its OS limits, and before it accepts any script it drops to the lowest priority. A V8 fatal
error or a runaway builtin cannot be stopped from inside the process that hosts the isolate:
the bridge watches from outside, and these limits are the floor under that watch.

- `RLIMIT_DATA` (DATA_MB): private writable memory. Not the address space: V8 reserves about
  1.4 TB of virtual addresses for its sandbox, so `RLIMIT_AS` cannot be set usefully. Below
  roughly 600 MB V8 cannot even reserve its code range, so the pool never passes less.
- `RLIMIT_CPU` (CPU_S): CPU seconds over the worker's whole life; the pool retires a worker
  long before it gets there, so hitting it means a runaway the bridge failed to stop.
- `RLIMIT_CORE` 0 (an aborting V8 leaves no core file), `RLIMIT_FSIZE` 0 (no file can grow),
  and, once V8 is up, `RLIMIT_NOFILE` low (nothing new can be opened).

The worker hosts one isolate per call (made ahead, used once) behind the same `V8Engine` the
bridge used in-process before, and serves `worker_protocol` frames on the engine's own thread.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import pwd
import resource
import sys
from typing import TYPE_CHECKING

from bridge.functions import worker_confinement as confinement
from bridge.functions.worker_protocol import (
    HEADER_BYTES,
    Answer,
    Eval,
    Fatal,
    FrameError,
    Ready,
    Release,
    Terminate,
    body_length,
    decode_to_worker,
    encode,
)
from bridge.unicode_text import valid_text

if TYPE_CHECKING:
    from bridge.functions.v8_engine import V8Engine, V8Sandbox

_NOFILE_AFTER_START = 64
_PROTOCOL_OUT = 1


def set_os_limits(data_mb: int, cpu_s: int) -> None:
    """The resource limits above; all before V8 is loaded."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_DATA, (data_mb * 1024 * 1024,) * 2)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))


def _send(frame: Answer | Ready | Fatal) -> None:
    data = encode(frame)
    view = memoryview(data)
    while view:
        view = view[os.write(_PROTOCOL_OUT, view) :]


class _Server:
    """Serves frames on the engine thread; one call (and so one isolate) at a time."""

    def __init__(self, engine: V8Engine) -> None:
        self._engine = engine
        self._sandbox: V8Sandbox | None = None
        self._running: tuple[int, asyncio.Task[None]] | None = None

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=2**16)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", buffering=0)
        )
        while True:
            try:
                header = await reader.readexactly(HEADER_BYTES)
                frame = decode_to_worker(await reader.readexactly(body_length(header)))
            except asyncio.IncompleteReadError:
                return  # the bridge closed the pipe: shut down
            if isinstance(frame, Eval):
                await self._start(frame)
            elif isinstance(frame, Terminate):
                if self._running is not None and self._running[0] == frame.seq:
                    self._running[1].cancel()
            elif isinstance(frame, Release):
                await self._release()

    async def _start(self, frame: Eval) -> None:
        if self._running is not None and not self._running[1].done():
            _send(Answer(seq=frame.seq, ok=False, error_code="protocol_error", message="busy"))
            return
        task = asyncio.get_running_loop().create_task(self._evaluate(frame))
        self._running = (frame.seq, task)

    async def _evaluate(self, frame: Eval) -> None:
        from bridge.functions.engine import SandboxError

        try:
            if self._sandbox is None:
                self._sandbox = await self._engine.fresh(heap_bytes=frame.heap_bytes)
            timeout_s = frame.timeout_ms / 1000
            if frame.follow is None:
                value = await self._sandbox.evaluate(frame.script, timeout_s=timeout_s)
            else:
                value = await self._sandbox.evaluate_then(
                    frame.script,
                    frame.follow,
                    timeout_s=timeout_s,
                    repeat_while=frame.repeat_while,
                    limit=frame.follow_limit,
                )
        except asyncio.CancelledError:
            _send(Answer(seq=frame.seq, ok=False, error_code="terminated", message="terminated"))
            return
        except SandboxError as exc:
            # A JavaScript string may hold a lone surrogate, which no frame can carry.
            message = valid_text(str(exc)[:4_000])
            _send(Answer(seq=frame.seq, ok=False, error_code=exc.code, message=message))
            return
        if value is not None and len(value) > frame.value_chars:
            # Refused by its length, here: never encoded, never sent, never parsed.
            message = f"the sandbox produced {len(value)} characters, over {frame.value_chars}"
            _send(Answer(seq=frame.seq, ok=False, error_code="result_too_large", message=message))
            return
        try:
            _send(
                Answer(seq=frame.seq, ok=True, value=None if value is None else valid_text(value))
            )
        except FrameError as exc:
            _send(Answer(seq=frame.seq, ok=False, error_code="result_too_large", message=str(exc)))

    async def _release(self) -> None:
        if self._running is not None:
            _, task = self._running
            task.cancel()
            await asyncio.wait({task})
            self._running = None
        sandbox, self._sandbox = self._sandbox, None
        if sandbox is not None:
            await sandbox.dispose()


async def _main(
    layers: dict[str, str],
    nobody: pwd.struct_passwd | None,
    libseccomp: ctypes.CDLL | None,
    probe: str | None,
) -> int:
    # Imported here, not at the top: the OS limits are set before V8 is loaded.
    from bridge.functions.engine import SandboxError
    from bridge.functions.v8_engine import V8Engine

    try:
        # Two made ahead, though a worker runs one call at a time: with one, taking it would
        # start making the next at once, on the engine thread the call's own segments need;
        # with two, the next one is made once the call is over.
        engine = await V8Engine.start(ahead=2, nice=0)
        await engine.wait_ready()
    except SandboxError as exc:
        _send(Fatal(message=str(exc)[:4_000]))
        return 1
    resource.setrlimit(resource.RLIMIT_NOFILE, (_NOFILE_AFTER_START, _NOFILE_AFTER_START))
    # The lowest priority from here on, before any owner script runs. Not earlier: a worker
    # replacing a crashed one should not crawl through its start on a busy machine.
    os.setpriority(os.PRIO_PROCESS, 0, 19)
    for thread_id in os.listdir("/proc/self/task"):
        # Threads V8 and the engine already started keep their own priority on Linux.
        os.setpriority(os.PRIO_PROCESS, int(thread_id), 19)
    # The layers that need V8 up first (see `worker_confinement`); the order matters: the
    # descriptors are listed through /proc before seccomp, which forbids opening it.
    layers["user"] = confinement.drop_user(nobody)
    layers["descriptors"] = confinement.close_descriptors()
    if probe is not None:
        _run_probe(probe, "before_seccomp", layers)
    layers["seccomp"] = confinement.seccomp(libseccomp)
    if probe is not None:
        _run_probe(probe, "confined", layers)
    _send(Ready(pid=os.getpid(), confinement=layers))
    try:
        await engine.run(_Server(engine).serve())
    except FrameError as exc:
        print(f"mineclaw worker: {exc}", file=sys.stderr)
        return 2
    finally:
        await engine.aclose()
    return 0


PROBE_ENV = "MINECLAW_TEST_WORKER_PROBE"
"""Tests only: a Python file the worker runs once it is confined, the stand-in for native code
after a V8 escape. Honoured only when this variable names it AND the file sits in the
repository's `tests/` folder; the bridge starts every worker with an empty environment, so
neither a Function (JavaScript in the isolate) nor `config.yml` can set it."""


def _probe_source() -> str | None:
    path = os.environ.get(PROBE_ENV)
    if not path:
        return None
    tests = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "tests")
    if os.path.commonpath([os.path.realpath(path), os.path.realpath(tests)]) != os.path.realpath(
        tests
    ):
        return None
    with open(path, encoding="utf-8") as probe:  # read before Landlock hides it
        return probe.read()


def _run_probe(source: str, stage: str, layers: dict[str, str]) -> None:
    results: dict[str, str] = {}
    scope = {"results": results, "stage": stage, "layers": dict(layers)}
    exec(compile(source, "<probe>", "exec"), scope)  # noqa: S102 - tests only
    print(f"PROBE {stage} " + json.dumps(results), file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    data_mb, cpu_s = int(argv[0]), int(argv[1])
    start_nice = int(argv[2]) if len(argv) > 2 else 0
    set_os_limits(data_mb, cpu_s)
    if start_nice:
        # A spare started in the background (see `WorkerProcess.spawn`): every thread V8
        # starts inherits this.
        os.setpriority(os.PRIO_PROCESS, 0, start_nice)
    # Anything printed by mistake must not corrupt the protocol on stdout.
    sys.stdout = sys.stderr
    # The layers that must come before any thread starts (every thread inherits them).
    nobody = confinement.unprivileged_user()
    libseccomp = confinement.load_libseccomp()
    probe = _probe_source()
    layers = {"no_new_privs": confinement.no_new_privs()}
    layers["landlock"] = confinement.landlock()
    return asyncio.run(_main(layers, nobody, libseccomp, probe))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
