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
import contextlib
import fcntl
import json
import logging
import math
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from bridge.web.content import Kind, MediaType
from bridge.web.extraction_worker import read_frame, write_chunks, write_frame

if TYPE_CHECKING:
    from bridge.redaction import RedactionRule

log = logging.getLogger(__name__)


def _workers_for_this_machine() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return 1 if cores <= 2 else 2


WORKERS = _workers_for_this_machine()
"""Worker processes (and pages parsed at once); more pages wait in the queue, each until its
deadline. One on a machine of one or two cores (two busy workers on two cores made a player's
verdict wait behind them: p99 4x idle), two on larger ones."""
MEMORY_BYTES = 1 << 30
"""Each worker's address-space limit (``RLIMIT_AS``): past it the parse fails, not the host."""
MARGIN_S = 0.25
"""How long before the fetch's deadline the worker is cut off, so the fallback is returned
before the fetch's own timeout fires."""
PIPE_BYTES = 1 << 20
"""Each worker pipe's capacity (Linux's default ceiling for an unprivileged process)."""
Extractor = Literal["trafilatura", "plain", "none"]


class ExtractionCut(Exception):
    """No text before the deadline: the job waited for a worker, or the worker was cut off
    before even the fallback was ready."""


class ExtractionRefused(Exception):
    """The body is not what its headers say (a compressed stream that does not inflate)."""


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
    stage: Literal["done", "fallback", "main", "failed", "refused"]
    title: str | None = None
    text: str = ""
    cut: bool = False
    charset: str = "utf-8"
    refused: str | None = None
    note: str | None = None
    why: str = ""


def _reading(frame: _Frame, extractor: Extractor, note: str | None = None) -> Reading:
    said = "; ".join(filter(None, [note, frame.note])) or None
    return Reading(
        frame.title, frame.text, frame.cut, frame.charset, frame.refused, extractor, said
    )


class _Call:
    """One job between the asking coroutine and the thread that drives a worker."""

    def __init__(self, header: bytes, body: Sequence[bytes], limit: int) -> None:
        self.header = header
        self.body = body
        self.answer_limit = limit * 6 + 65_536  # JSON of ``limit`` characters at worst
        self.loop = asyncio.get_running_loop()
        self.future: asyncio.Future[Reading] = self.loop.create_future()
        self._lock = threading.Lock()
        self._state: Literal["queued", "running", "cut", "settled"] = "queued"
        self._process: subprocess.Popen[bytes] | None = None

    def begin(self, process: subprocess.Popen[bytes]) -> bool:
        with self._lock:
            if self._state == "cut":
                return False
            self._state, self._process = "running", process
            return True

    def cut(self) -> bool:
        """Stop the job: a running one's worker is killed (never one that has answered: it may
        be on the next job already). True when it had not begun."""
        with self._lock:
            if self._state == "settled":
                return False
            began = self._state == "running"
            self._state = "cut"
            if began and self._process is not None:
                self._process.kill()
            return not began

    def drop(self) -> None:
        """Cut the job if it still waits in the queue; one running is left to end."""
        with self._lock:
            if self._state == "queued":
                self._state = "cut"

    @property
    def was_cut(self) -> bool:
        with self._lock:
            return self._state == "cut"

    def settle(self, outcome: Reading | BaseException) -> None:
        with self._lock:
            if self._state == "running":
                self._state = "settled"

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
    """``WORKERS`` warm worker processes behind one queue, and a plain lane: one more worker
    that makes only the linear plain text (no trafilatura), for the pages that found every
    worker busy, so a page still queued at its deadline comes back as its plain text."""

    def __init__(
        self, *, workers: int = WORKERS, memory_bytes: int = MEMORY_BYTES, plain_only: bool = False
    ) -> None:
        self._workers = workers
        self._memory = memory_bytes
        self._plain_only = plain_only
        self._queue: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._processes: set[subprocess.Popen[bytes]] = set()
        self._pending = 0  # jobs put in the queue and not yet answered or dropped
        self._closed = False
        self._plain_lane = (
            None
            if plain_only
            else ExtractionPool(workers=1, memory_bytes=memory_bytes, plain_only=True)
        )
        self.spawned = 0
        """Worker processes started so far (tests and the bench see recycling)."""

    async def read(
        self,
        body: Sequence[bytes],
        *,
        kind: Kind,
        media: MediaType,
        url: str,
        limit: int,
        deadline: float,
        encoding: str | None = None,
        cap: int = 0,
        redaction: Sequence[RedactionRule] = (),
    ) -> Reading:
        """``body`` (its chunks, as read: never joined in this process, the thread that
        drives the worker writes them to its pipe one by one) as text by ``deadline`` (the
        running loop's clock), or ``ExtractionCut``.
        ``encoding``: the body's ``Content-Encoding`` (gzip, deflate), inflated in the worker to
        at most ``cap`` bytes. ``redaction``: rules the worker applies to the title and the
        whole text before it cuts the text to ``limit`` (redact, then cut), so the caller's own
        redaction of the answer, on its event loop, finds nothing of the page's left to
        replace: a page of key-shaped strings cost the loop 6 ms per 20,000 characters."""
        loop = asyncio.get_running_loop()
        remaining = deadline - loop.time() - MARGIN_S
        job = {
            "kind": kind,
            "essence": media.essence,
            "charset": media.charset,
            "url": url,
            "limit": limit,
            "encoding": encoding,
            "cap": cap,
            "cpu_s": max(1, math.ceil(remaining)),
            "redaction": [[rule.kind, rule.pattern] for rule in redaction],
        }
        header = json.dumps(job).encode()
        call, waits = self._submit(header, body, limit)
        # Every worker is busy: the plain lane makes this page's plain text meanwhile, the
        # answer if no worker frees up (or gets far enough) before the deadline.
        backup = None
        if waits and self._plain_lane is not None:
            backup = self._plain_lane._submit(header, body, limit)[0]
            backup.future.add_done_callback(_retrieved)
        try:
            async with asyncio.timeout(max(0.0, remaining)):
                return await asyncio.shield(call.future)
        except TimeoutError:
            if call.cut():
                return await _backup(backup, "no extraction worker was free before the deadline")
            # Killed: the driving thread reads the end of the pipe at once and answers with
            # the fallback it holds, if any.
            try:
                return await call.future
            except ExtractionCut:
                return await _backup(backup, "the page could not be read before the deadline")
        except asyncio.CancelledError:
            call.cut()
            raise
        finally:
            if backup is not None:
                backup.drop()  # not needed: dropped if still queued (a running one is linear)

    def _submit(self, header: bytes, body: Sequence[bytes], limit: int) -> tuple[_Call, bool]:
        """The job queued, and whether it found every worker busy."""
        call = _Call(header, body, limit)
        self._start()
        with self._lock:
            waits = self._pending >= self._workers
            self._pending += 1
        self._queue.put(call)
        return call, waits

    @property
    def pending(self) -> int:
        """Jobs in the queue or in a worker now (a test waits for its page to be in one)."""
        with self._lock:
            return self._pending

    def worker_pids(self) -> list[int]:
        """The worker processes alive now, the plain lane's too (the bench reads their memory)."""
        lane = self._plain_lane.worker_pids() if self._plain_lane is not None else []
        with self._lock:
            return [process.pid for process in self._processes] + lane

    def close(self) -> None:
        """Stop the threads and kill every worker (the bridge is ending)."""
        if self._plain_lane is not None:
            self._plain_lane.close()
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
        command = [sys.executable, "-P", "-m", "bridge.web.extraction_worker", str(self._memory)]
        process = subprocess.Popen(
            command + (["plain"] if self._plain_only else []),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd="/",
            # A process group of its own, so a Ctrl-C at the terminal is the bridge's to handle,
            # but the bridge's session: with Linux's autogroup (on by default) each session is a
            # scheduling group of its own, weighed against the bridge's as a whole at niceness
            # 0, and the worker's idle class counted only inside it (in a session of its own a
            # worker delayed the loop by a scheduler tick, ~4 ms, all through a hostile page).
            process_group=0,
        )
        for pipe in (process.stdin, process.stdout):
            _widen(pipe)
        with self._lock:
            self._processes.add(process)
            self.spawned += 1
        return process

    def _retire(self, process: subprocess.Popen[bytes]) -> None:
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:  # a body cut off mid-write stays in the buffer: not sent
                    pass
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
            outcome: Reading | BaseException | None = None
            try:
                if process is not None and process.poll() is not None:
                    spent, process = process, None  # it ended between jobs (killed from outside)
                    self._retire(spent)
                if process is None:
                    process = self._spawn()
                if not call.begin(process):
                    continue  # cut while it waited in the queue
                outcome, healthy = self._run(process, call)
                if not healthy:  # replaced first (a fork and exec): the next job finds it warm
                    spent, process = process, None
                    self._retire(spent)
                    process = None if self._closed else self._spawn()
            except Exception as exc:  # this thread is its worker's only driver: it goes on
                log.exception("web extraction: a worker could not be run or replaced")
                if outcome is None:
                    outcome = ExtractionFailed(f"the extraction worker could not run ({exc})")
                if process is not None:
                    spent, process = process, None
                    with contextlib.suppress(Exception):
                        self._retire(spent)
            finally:
                if outcome is not None:
                    call.settle(outcome)
                with self._lock:
                    self._pending -= 1

    def _run(
        self, process: subprocess.Popen[bytes], call: _Call
    ) -> tuple[Reading | BaseException, bool]:
        """The job's answer, and whether the worker may take the next job."""
        assert process.stdin is not None and process.stdout is not None
        fallback: _Frame | None = None
        try:
            write_frame(process.stdin, call.header)
            write_chunks(process.stdin, call.body)
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
                    if self._plain_only:  # the plain lane's whole answer
                        return _reading(frame, "plain"), True
                    fallback = frame
                    continue
                if frame.stage == "refused":
                    return ExtractionRefused(frame.why), True
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


def _widen(pipe: IO[bytes] | None) -> None:
    """The pipe holds ``PIPE_BYTES``: a page of a megabyte goes to its worker in one write,
    not 16 of the default 64 KiB, each a wake-up of the thread that writes it (and a turn of
    the GIL taken from the event loop). Where the kernel refuses, the pipe stays as it was."""
    if pipe is None or not hasattr(fcntl, "F_SETPIPE_SZ"):
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)


def _retrieved(future: asyncio.Future[Reading]) -> None:
    """A plain-lane answer may be wanted by nobody: its error is read so asyncio logs none."""
    if not future.cancelled():
        future.exception()


async def _backup(backup: _Call | None, why: str) -> Reading:
    """The plain lane's answer for a page no worker read in time, or ``ExtractionCut``."""
    if backup is None or backup.cut():  # it never began: no text
        raise ExtractionCut(why)
    try:
        reading = await backup.future
    except ExtractionCut:
        raise ExtractionCut(why) from None
    if reading.extractor != "plain":
        return reading  # not HTML: decoded, which is all a worker does with it too
    note = f"{why} for trafilatura; plain text of the page"
    return replace(reading, note="; ".join(filter(None, [note, reading.note])))


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
