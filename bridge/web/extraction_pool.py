"""Warm extraction worker processes, killed at a fetch's deadline.

A fetched body is read into text only in a worker process (``bridge.web.extraction_worker``):
trafilatura is worse than linear on some pages, and a thread cannot be stopped, so the fetch's
timeout used to cancel the wait and leave the work running. Here the wait ends at the deadline
and so does the work: the worker is killed (SIGKILL) and a fresh one started in its place.

The pool is process-wide and bound to no event loop: ``WORKERS`` daemon threads of its own each
drive one worker over its pipes (blocking reads, never on the event loop, never in an executor
the bridge uses), and hand the answer back to the loop that asked. A job waits in the pool's
queue for a free worker; one still queued at its deadline is dropped without running. For HTML
the worker answers the linear plain-text fallback first and trafilatura's text second; a job
cut off at its deadline (or whose worker died: memory, CPU time) returns the fallback and says
so (``Reading.extractor``, ``Reading.note``).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import math
import os
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from bridge.web.content import Kind, MediaType
from bridge.web.extraction_worker import read_frame, write_frame

log = logging.getLogger(__name__)

WORKERS = 2
"""Worker processes (and pages parsed at once); more pages wait in the queue, each until its
deadline. Two: the machines the bridge runs on often have two cores, and a turn must keep one."""
MEMORY_BYTES = 1 << 30
"""Each worker's address-space limit (``RLIMIT_AS``): past it the parse fails, not the host."""
MARGIN_S = 0.25
"""How long before the fetch's deadline the worker is cut off, so the fallback is returned
before the fetch's own timeout fires."""
Extractor = Literal["trafilatura", "plain", "none"]


class ExtractionCut(Exception):
    """No text before the deadline: the job waited for a worker, or the worker was cut off
    before even the fallback was ready."""


class ExtractionFailed(Exception):
    """The worker ended before it had any text, and not because the deadline cut it (it could
    not start: a broken install; or a limit ended it)."""


@dataclass(frozen=True, slots=True)
class Reading:
    """A body as text. ``extractor``: ``trafilatura`` (main), ``plain`` (the fallback: text
    from the HTML tree) or ``none`` (not HTML: decoded only); ``note`` says why the fallback."""

    title: str | None
    text: str
    truncated: bool
    charset: str
    refused_charset: str | None
    extractor: Extractor
    note: str | None = None


class _Frame(BaseModel):
    """One answer of a worker, checked: the worker parses hostile pages, so its words are not
    taken on trust either."""

    model_config = ConfigDict(extra="forbid")
    stage: Literal["done", "fallback", "main", "failed"]
    title: str | None = None
    text: str = ""
    cut: bool = False
    charset: str = "utf-8"
    refused: str | None = None
    why: str = ""


def _reading(frame: _Frame, extractor: Extractor, note: str | None = None) -> Reading:
    return Reading(
        frame.title, frame.text, frame.cut, frame.charset, frame.refused, extractor, note
    )


class _Call:
    """One job between the asking coroutine and the thread that drives a worker."""

    def __init__(self, header: bytes, body: bytes, limit: int) -> None:
        self.header = header
        self.body = body
        self.answer_limit = limit * 6 + 65_536  # JSON of ``limit`` characters at worst
        self.loop = asyncio.get_running_loop()
        self.future: asyncio.Future[Reading] = self.loop.create_future()
        self._lock = threading.Lock()
        self._state: Literal["queued", "running", "cut"] = "queued"
        self._process: subprocess.Popen[bytes] | None = None

    def begin(self, process: subprocess.Popen[bytes]) -> bool:
        with self._lock:
            if self._state == "cut":
                return False
            self._state, self._process = "running", process
            return True

    def cut(self) -> bool:
        """Stop the job: a running one's worker is killed. True when it had not begun."""
        with self._lock:
            began = self._state == "running"
            self._state = "cut"
            if began and self._process is not None:
                self._process.kill()
            return not began

    @property
    def was_cut(self) -> bool:
        with self._lock:
            return self._state == "cut"

    def settle(self, outcome: Reading | BaseException) -> None:
        def done() -> None:
            if self.future.done():
                return
            if isinstance(outcome, BaseException):
                self.future.set_exception(outcome)
            else:
                self.future.set_result(outcome)

        try:
            self.loop.call_soon_threadsafe(done)
        except RuntimeError:  # the asking loop is closed: nobody is waiting any more
            pass


class ExtractionPool:
    """``WORKERS`` warm worker processes behind one queue."""

    def __init__(self, *, workers: int = WORKERS, memory_bytes: int = MEMORY_BYTES) -> None:
        self._workers = workers
        self._memory = memory_bytes
        self._queue: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._processes: set[subprocess.Popen[bytes]] = set()
        self._closed = False
        self.spawned = 0
        """Worker processes started so far (tests and the bench see recycling)."""

    async def read(
        self,
        body: bytes,
        *,
        kind: Kind,
        media: MediaType,
        url: str,
        limit: int,
        deadline: float,
    ) -> Reading:
        """``body`` as text by ``deadline`` (the running loop's clock), or ``ExtractionCut``."""
        loop = asyncio.get_running_loop()
        remaining = deadline - loop.time() - MARGIN_S
        job = {
            "kind": kind,
            "essence": media.essence,
            "charset": media.charset,
            "url": url,
            "limit": limit,
            "cpu_s": max(1, math.ceil(remaining)),
        }
        call = _Call(json.dumps(job).encode(), body, limit)
        self._start()
        self._queue.put(call)
        try:
            async with asyncio.timeout(max(0.0, remaining)):
                return await asyncio.shield(call.future)
        except TimeoutError:
            if call.cut():
                raise ExtractionCut("no extraction worker was free before the deadline") from None
            # Killed: the driving thread reads the end of the pipe at once and answers with
            # the fallback it holds, if any.
            return await call.future
        except asyncio.CancelledError:
            call.cut()
            raise

    def worker_pids(self) -> list[int]:
        """The worker processes alive now (the bench reads their memory)."""
        with self._lock:
            return [process.pid for process in self._processes]

    def close(self) -> None:
        """Stop the threads and kill every worker (the bridge is ending)."""
        with self._lock:
            self._closed = True
            for _ in self._threads:
                self._queue.put(None)
            for process in list(self._processes):
                process.kill()

    def _start(self) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("the extraction pool is closed")
            while len(self._threads) < self._workers:
                thread = threading.Thread(
                    target=self._drive, name=f"web-extract-{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()

    def _spawn(self) -> subprocess.Popen[bytes]:
        # The child imports the very bridge package this process runs, wherever it lies, and
        # nothing from its working directory (-P); it gets no secret from this environment.
        here = str(Path(__file__).resolve().parents[2])
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TZ")}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))
        process = subprocess.Popen(
            [sys.executable, "-P", "-m", "bridge.web.extraction_worker", str(self._memory)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd="/",
            start_new_session=True,  # a Ctrl-C at the terminal is the bridge's to handle
        )
        with self._lock:
            self._processes.add(process)
            self.spawned += 1
        return process

    def _retire(self, process: subprocess.Popen[bytes]) -> None:
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        with self._lock:
            self._processes.discard(process)

    def _drive(self) -> None:
        process: subprocess.Popen[bytes] | None = None
        while True:
            call = self._queue.get()
            if call is None:
                if process is not None:
                    self._retire(process)
                return
            if process is None:
                process = self._spawn()
            if not call.begin(process):
                continue  # cut while it waited in the queue
            outcome, healthy = self._run(process, call)
            if not healthy:  # replaced first (a fork and exec), so the next job finds it warm
                self._retire(process)
                process = None if self._closed else self._spawn()
            call.settle(outcome)

    def _run(
        self, process: subprocess.Popen[bytes], call: _Call
    ) -> tuple[Reading | BaseException, bool]:
        """The job's answer, and whether the worker may take the next job."""
        assert process.stdin is not None and process.stdout is not None
        fallback: _Frame | None = None
        try:
            write_frame(process.stdin, call.header)
            write_frame(process.stdin, call.body)
            while True:
                data = read_frame(process.stdout, call.answer_limit)
                if data is None:
                    raise EOFError("the worker ended")
                frame = _Frame.model_validate(json.loads(data))
                if frame.stage == "done":
                    return _reading(frame, "none"), True
                if frame.stage == "main":
                    return _reading(frame, "trafilatura"), True
                if frame.stage == "fallback":
                    fallback = frame
                    continue
                healthy = frame.why != "memory"
                note = f"trafilatura failed ({frame.why}); plain text of the page"
                if fallback is None:
                    return ExtractionCut(f"the page could not be read ({frame.why})"), healthy
                return _reading(fallback, "plain", note), healthy
        except (OSError, EOFError, ValueError, ValidationError) as exc:
            if call.was_cut:
                note = "trafilatura was cut off at the fetch's deadline; plain text of the page"
                if fallback is None:
                    return ExtractionCut("the page could not be read before the deadline"), False
                return _reading(fallback, "plain", note), False
            ended = process.poll()
            log.error("web extraction worker failed (exit status %s): %s", ended, exc)
            if fallback is None:
                failed = f"the extraction worker ended before reading the page ({exc})"
                return ExtractionFailed(failed), False
            note = "trafilatura's worker ended (memory or CPU limit); plain text of the page"
            return _reading(fallback, "plain", note), False


_shared: ExtractionPool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> ExtractionPool:
    """The process's one pool, started on first use; its workers are killed at exit."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ExtractionPool()
            atexit.register(_shared.close)
        return _shared
