"""The stdio transport of an MCP server, the bridge's own: every byte the child writes is
bounded where it is read.

The same shape as the SDK's ``stdio_client`` (a child in its own session, newline-delimited
JSON-RPC over its pipes, two pipe tasks feeding the session's memory streams, the spec's
shutdown: close stdin, wait, then kill the group), with three differences:

- **stdout** goes through ``LineReader``: linear in the bytes, each line at most
  ``result_limit`` bytes (the server's ``max_result_chars`` worth), or ``line_limit`` while a
  listing, whose pages may be long, is waiting. A longer line is dropped at the pipe and the
  request it answers (the id at its start, or the only request waiting) gets an error
  ``RESULT_TOO_LARGE`` instead, so that call fails and the session goes on. A large line
  within the limit is parsed on a worker thread of anyio's, never the loop's default executor.
- **stderr** is a pipe, not the bridge's own stderr (which the playground shows in its chat):
  its first ``STDERR_LINES`` lines are kept, cut, for the log and ``/mineclaw status`` when the
  server fails to start; the rest is read and dropped so the child never blocks on it.
- only what the bridge asked for or uses reaches the session, and reading is paced to a share
  of the loop (``bridge.mcp.server_messages``); a large line is parsed only while a request
  waits for an answer. The ids of the requests sent are kept, also to tell whose answer an
  oversized line was.
"""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import anyio.to_thread
import mcp_types
from mcp.client._transport import TransportStreams
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError

from bridge.mcp.child import CONFINEMENT_PREFIX
from bridge.mcp.line_reader import LineReader, Oversized
from bridge.mcp.server_messages import HANDED_S, Admission, Pace

log = logging.getLogger(__name__)

RESULT_TOO_LARGE = -32_098
"""The error code of a request whose answer was cut at the pipe (a server-error code no MCP
method defines; the connection turns it into ``ResultTooLarge``)."""
CHUNK_BYTES = 65_536
THREAD_PARSE_BYTES = 256 * 1024
"""A line at least this long is parsed off the loop."""
STDERR_LINES = 5
STDERR_LINE_CHARS = 300
STDERR_PACE_S = 0.01
"""Past its first lines, stderr is read and dropped one chunk per this long (at most 6.4 MB/s):
a child writing stderr for ever costs the loop a hundred wake-ups a second, not all of them."""
YIELD_S = 0.002
"""A reader that has held the loop this long through one chunk's lines lets others run."""
EXIT_GRACE_S = 2.0
KILL_GRACE_S = 2.0
WRITER_FLUSH_S = 0.5
STDERR_GRACE_S = 0.5
"""How long an ended child's last stderr lines are waited for (a grandchild holding the pipe
would keep it open for ever)."""

_parsing = anyio.CapacityLimiter(2)


@dataclass(slots=True)
class ChildStderr:
    """The first lines the child wrote on stderr, cut (read until the child closes it), and
    the confinement report ``bridge.mcp.child`` writes before the server runs."""

    lines: list[str] = field(default_factory=list)
    confinement: dict[str, str] | None = None


@contextlib.asynccontextmanager
async def stdio_transport(
    command: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    line_limit: int,
    result_limit: int,
    stderr: ChildStderr,
) -> AsyncIterator[TransportStreams]:
    process = await anyio.open_process(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    admission = Admission()
    writer_done = anyio.Event()
    stderr_done = anyio.Event()

    async def read_stdout() -> None:
        assert process.stdout is not None
        lines = LineReader(line_limit)
        pace = Pace()
        try:
            async with read_writer:
                while True:
                    chunk = await process.stdout.receive(CHUNK_BYTES)
                    held = time.monotonic()
                    # A listing's page may be long; an answer to a call only as long as its
                    # text may be, so a longer one is cut here, before any of it is kept.
                    lines.limit = line_limit if admission.listing else result_limit
                    for line in lines.feed(chunk):
                        started = time.monotonic()
                        message = await _message(line, admission, lines.limit)
                        spent = time.monotonic() - started
                        if message is not None:
                            await read_writer.send(message)
                            spent += HANDED_S
                        wait = pace.spent(spent)
                        if wait > 0:
                            await anyio.sleep(wait)
                            held = time.monotonic()
                        elif time.monotonic() - held > YIELD_S:
                            await anyio.lowlevel.checkpoint()
                            held = time.monotonic()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the child closed stdout, or the session is gone
        except OSError as exc:
            log.info("reading an MCP server's stdout failed: %s", exc)
        finally:
            await _drain(process.stdout)

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for sent in write_reader:
                    message = sent.message
                    admission.sent(message)
                    text = message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((text + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()
        finally:
            writer_done.set()

    async def read_stderr() -> None:
        assert process.stderr is not None
        lines = LineReader(STDERR_LINE_CHARS * 4)
        first_line = True  # the child's report, written before the server ran
        with contextlib.suppress(
            anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError
        ):
            while True:
                chunk = await process.stderr.receive(CHUNK_BYTES)
                if len(stderr.lines) >= STDERR_LINES:
                    # Read and dropped, so the child does not block on a full pipe for good;
                    # paced, so a child that writes for ever does not keep the loop busy.
                    await anyio.sleep(STDERR_PACE_S)
                    continue
                for line in lines.feed(chunk):
                    raw = line.head if isinstance(line, Oversized) else line
                    text = raw.decode("utf-8", "replace").strip()
                    if first_line:
                        first_line = False
                        if text.startswith(CONFINEMENT_PREFIX):
                            stderr.confinement = _report(text[len(CONFINEMENT_PREFIX) :])
                            continue
                    if text and len(stderr.lines) < STDERR_LINES:
                        stderr.lines.append(text[:STDERR_LINE_CHARS])
        stderr_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(WRITER_FLUSH_S):
            await writer_done.wait()
        await _stop(process, stderr_done)
        for stream in (read_stream, write_stream, read_writer, write_reader):
            await stream.aclose()

    async with anyio.create_task_group() as group:
        group.start_soon(read_stdout)
        group.start_soon(write_stdin)
        group.start_soon(read_stderr)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await shutdown()
            group.cancel_scope.cancel()


async def _message(
    line: bytes | Oversized, admission: Admission, limit: int
) -> SessionMessage | Exception | None:
    waiting = admission.waiting
    if isinstance(line, Oversized):
        return _too_large(line, admission, limit)
    if not line.strip():
        return None
    try:
        if len(line) >= THREAD_PARSE_BYTES:
            if not waiting:  # only an answer may be this long, and nothing was asked
                admission.dropped += 1
                return None
            message = await anyio.to_thread.run_sync(_parsed, line, limiter=_parsing)
        else:
            message = _parsed(line)
    except ValueError as exc:
        # The parser's text quotes the line: the server's words, kept out of reasons and logs.
        log.debug("an MCP server's line is not JSON-RPC", exc_info=exc)
        return ValueError(f"the server wrote a line of {len(line)} bytes that is not JSON-RPC")
    if not admission.admit(message):
        return None
    return SessionMessage(message)


def _parsed(line: bytes) -> Any:
    return mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)


def _too_large(line: Oversized, admission: Admission, limit: int) -> SessionMessage | None:
    waiting = admission.waiting
    named = line.request_id()
    if named in waiting:
        answered: int | str | None = named
    elif len(waiting) == 1:
        answered = next(iter(waiting))
    else:
        answered = None
    if answered is None:
        log.warning(
            "an MCP server wrote a line of %d bytes (over %d) answering no request it was "
            "asked; dropped",
            line.size,
            limit,
        )
        return None
    admission.answered(answered)
    error = ErrorData(
        code=RESULT_TOO_LARGE,
        message=f"the server's answer was {line.size} bytes, over the {limit} this server may send",
    )
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=answered, error=error))


def _report(text: str) -> dict[str, str] | None:
    try:
        found = json.loads(text)
    except ValueError:
        return None
    if not isinstance(found, dict):
        return None
    return {str(name): str(state)[:200] for name, state in found.items()}


async def _drain(stream: anyio.abc.ByteReceiveStream) -> None:
    """Read and drop what is left, so a child flushing output can exit (ends at close)."""
    with (
        anyio.CancelScope(shield=True),
        contextlib.suppress(
            anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError
        ),
    ):
        while True:
            await stream.receive(CHUNK_BYTES)


async def _stop(process: anyio.abc.Process, stderr_done: anyio.Event) -> None:
    """The spec's shutdown: close stdin, give the child a grace, then end its whole group;
    what it wrote on stderr before it ended is read before the pipe is closed."""
    await _close(process.stdin)
    if not await _exited(process, EXIT_GRACE_S):
        await terminate_posix_process_tree(process, KILL_GRACE_S)
        if not await _exited(process, KILL_GRACE_S):
            log.warning("MCP server process %d outlived its kill; left behind", process.pid)
    with anyio.move_on_after(STDERR_GRACE_S):
        await stderr_done.wait()
    await _close(process.stdout)
    await _close(process.stderr)
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with contextlib.suppress(PermissionError):
            close()


async def _close(pipe: anyio.abc.AsyncResource | None) -> None:
    if pipe is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await pipe.aclose()


async def _exited(process: anyio.abc.Process, within_s: float) -> bool:
    """Polls ``returncode``: ``wait()`` would also wait for the pipes, which a grandchild that
    inherited them keeps open."""
    with anyio.move_on_after(within_s):
        while process.returncode is None:
            await anyio.sleep(0.01)
    return process.returncode is not None
