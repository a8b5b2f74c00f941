"""The stdio transport of an MCP server, the bridge's own: every byte the child writes is
bounded where it is read.

The same shape as the SDK's ``stdio_client`` (a child in its own session, newline-delimited
JSON-RPC over its pipes, two pipe tasks feeding the session's memory streams, the spec's
shutdown: close stdin, wait, then kill the group), with three differences:

- **stdout** goes through ``LineReader``: linear in the bytes, each line at most ``line_limit``
  bytes. A longer line is dropped at the pipe and the request it answers (the id at its start,
  or the only request waiting) gets an error ``RESULT_TOO_LARGE`` instead, so that call fails
  and the session goes on. A large line within the limit is parsed on a worker thread of
  anyio's, never the loop's default executor.
- **stderr** is a pipe, not the bridge's own stderr (which the playground shows in its chat):
  its first ``STDERR_LINES`` lines are kept, cut, for the log and ``/mineclaw status`` when the
  server fails to start; the rest is read and dropped so the child never blocks on it.
- the ids of the requests sent are kept, to tell whose answer an oversized line was.
"""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
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
from mcp.types import ErrorData, JSONRPCError, JSONRPCRequest, JSONRPCResponse

from bridge.mcp.child import CONFINEMENT_PREFIX
from bridge.mcp.line_reader import LineReader, Oversized

log = logging.getLogger(__name__)

RESULT_TOO_LARGE = -32_098
"""The error code of a request whose answer was cut at the pipe (a server-error code no MCP
method defines; the connection turns it into ``ResultTooLarge``)."""
CHUNK_BYTES = 65_536
THREAD_PARSE_BYTES = 256 * 1024
"""A line at least this long is parsed off the loop."""
STDERR_LINES = 5
STDERR_LINE_CHARS = 300
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
    waiting: set[int | str] = set()
    writer_done = anyio.Event()
    stderr_done = anyio.Event()

    async def read_stdout() -> None:
        assert process.stdout is not None
        lines = LineReader(line_limit)
        try:
            async with read_writer:
                while True:
                    chunk = await process.stdout.receive(CHUNK_BYTES)
                    for line in lines.feed(chunk):
                        message = await _message(line, waiting, line_limit)
                        if message is not None:
                            await read_writer.send(message)
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
                    if isinstance(message, JSONRPCRequest):
                        waiting.add(message.id)
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
                    continue  # read and dropped: the child must never block on a full pipe
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
    line: bytes | Oversized, waiting: set[int | str], limit: int
) -> SessionMessage | Exception | None:
    if isinstance(line, Oversized):
        return _too_large(line, waiting, limit)
    if not line.strip():
        return None
    try:
        if len(line) >= THREAD_PARSE_BYTES:
            message = await anyio.to_thread.run_sync(_parsed, line, limiter=_parsing)
        else:
            message = _parsed(line)
    except ValueError as exc:
        # The parser's text quotes the line: the server's words, kept out of reasons and logs.
        log.debug("an MCP server's line is not JSON-RPC", exc_info=exc)
        return ValueError(f"the server wrote a line of {len(line)} bytes that is not JSON-RPC")
    if isinstance(message, JSONRPCResponse | JSONRPCError):
        waiting.discard(message.id)
    return SessionMessage(message)


def _parsed(line: bytes) -> Any:
    return mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)


def _too_large(line: Oversized, waiting: set[int | str], limit: int) -> SessionMessage | None:
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
    waiting.discard(answered)
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
