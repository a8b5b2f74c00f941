"""One MCP server's session, kept up by a supervisor task.

The supervisor connects (the SDK's ``Client`` over stdio or streamable HTTP, the
handshake-era ``initialize``), lists the tools, and then waits: for the bridge to stop it, for
the server to end its output (a stdio child that exited), for a call that found the connection
broken, or for ``notifications/tools/list_changed`` (it lists again). A connection that ends is
a failure: the supervisor starts the server again after a backoff that doubles (from
``restart_backoff_ms``, at most a minute) and gives up after ``max_restarts`` failures in a row
(a connection that stayed up ``STABLE_S`` starts the count again) with one line in the log and
the reason kept for ``/mineclaw status``. Connecting and listing share ``connect_timeout_ms``:
a server that never answers the handshake is a failure like any other.

Calls come from turns (other tasks) and never wait for the supervisor: a server that is not
ready is ``Unavailable`` at once with the reason, and a call is bounded by ``call_timeout_ms``;
a call cancelled by the player's stop sends the MCP cancellation (the SDK does, on
cancellation of the request).

The SDK's defaults refuse what this client does not offer: a server's sampling (asking our
model), elicitation and roots requests get an error answer, and the client declares none of
those capabilities.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT as Progress
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CONNECTION_CLOSED,
    CallToolResult,
    Implementation,
    ToolListChangedNotification,
)

import bridge
from bridge.control.mcp_config import McpServerConfig
from bridge.errors import MineclawError
from bridge.mcp.discovery import OfferedTool, RefusedTool, checked_off_loop
from bridge.mcp.server_messages import Admission, AdmittedRead, AdmittedWrite
from bridge.mcp.stdio_transport import RESULT_TOO_LARGE, ChildStderr, stdio_transport
from bridge.unicode_text import name_skeleton

log = logging.getLogger(__name__)

STABLE_S = 60.0
"""A connection up this long was not a crash loop: the failure count starts again."""
MAX_BACKOFF_S = 60.0
MAX_LIST_PAGES = 8
RELIST_MIN_S = 0.25
RELIST_FACTOR = 4.0
"""After a listing whose check took c seconds, the next waits until max(RELIST_MIN_S,
RELIST_FACTOR * c) have passed: a server that says list_changed after every listing, each
with new schemas, gets at most a fifth of a thread's time, never the loop's."""
CLIENT_INFO = Implementation(name="mineclaw-bridge", version=bridge.__version__)
LISTING_LINE_BYTES = 4 * 1024 * 1024
"""The least a stdio server's line may be: room for a page of tools/list (MAX_TOOLS tools with
schemas of up to MAX_SCHEMA_CHARS)."""
BYTES_PER_CHAR = 6
"""A result character as JSON on the wire, at worst (``\\u0000``); the text is cut to
``max_result_chars`` anyway, so a line past this many bytes a character is never needed."""


BRIDGE_ROOT = str(Path(bridge.__file__).resolve().parent.parent)
CHILD_START = (
    f"import sys; sys.path.insert(0, {BRIDGE_ROOT!r}); from bridge.mcp.child import main; "
    "sys.exit(main(sys.argv[1:]))"
)
"""The child is this process's own ``bridge.mcp.child`` (isolated mode: no ``PYTHONPATH``,
no user site), never another installation's."""
OWN_FOLDERS = "mcp"
SYSTEM_READ = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/opt",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
    "/etc/host.conf",
    "/etc/localtime",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/mime.types",
    "/dev/urandom",
    "/dev/random",
    "/dev/zero",
    "/sys/devices/system/cpu",
)
"""What any program needs to start and reach a network: the system's programs, libraries,
certificates and name lookup; no home folder, no ``/etc/passwd``, no ``/tmp``."""


def readable_paths(config: McpServerConfig, folder: Path) -> list[str]:
    """What a stdio server may read: the system's, Python's (``python3`` servers, and this
    process's own installation), its working folder, each file its ``args`` name (the script
    of ``python3 server.py``: the file alone, not the folder it lies in) and the owner's
    ``read`` (relative paths from that folder)."""
    python = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    python.add(os.path.dirname(os.path.realpath(sys.executable)))
    own = [str(folder / path) for path in config.read]
    return [*SYSTEM_READ, *sorted(python), str(folder), *named_files(config.args, folder), *own]


def named_files(args: list[str], folder: Path) -> list[str]:
    """The arguments that are files (relative ones from the server's folder): the owner named
    them on the command line, so a server that could not read its own script would only fail
    with a bare "Permission denied"."""
    files = []
    for argument in args:
        if not argument or argument.startswith("-") or "\0" in argument:
            continue
        path = folder / argument  # an absolute argument replaces the folder
        try:
            if path.is_file():
                files.append(str(path.resolve()))
        except OSError:
            continue  # too long a name, a loop of links: not a file it can be given
    return files


def line_limit(config: McpServerConfig) -> int:
    """The longest line a stdio server may write while a listing is asked for: its largest
    ``max_result_chars`` worth of bytes, or a listing page's, whichever is more."""
    return max(LISTING_LINE_BYTES, result_line_limit(config))


def result_line_limit(config: McpServerConfig) -> int:
    """The longest line a stdio server may write while no listing is asked for: its largest
    ``max_result_chars`` worth of bytes. A longer answer is cut at the pipe and its call fails
    as ``result_too_large``; a shorter one is parsed and its text cut to the tool's bound."""
    chars = max(
        [config.max_result_chars, *(t.max_result_chars or 0 for t in config.tools.values())]
    )
    return chars * BYTES_PER_CHAR


class State(enum.StrEnum):
    STARTING = "starting"
    READY = "ready"
    RESTARTING = "restarting"
    GAVE_UP = "stopped after repeated failures"
    CLOSED = "closed"


class McpCallError(MineclawError):
    """A call that did not get a result from the server."""


class Unavailable(McpCallError):
    """The server cannot take calls now; the message says why."""


class CallTimedOut(McpCallError):
    pass


class CallFailed(McpCallError):
    """The server answered the request with a protocol error (not a tool's own error)."""


class ResultTooLarge(McpCallError):
    """The server's answer was over the bytes it may send and was dropped at the pipe."""


@dataclass(frozen=True, slots=True)
class Listing:
    offered: tuple[OfferedTool, ...] = ()
    refused: tuple[RefusedTool, ...] = ()
    checked_s: float = 0.0
    """How long checking the tools took (on the listing thread)."""


class ServerConnection:
    """``start()`` once, ``aclose()`` once; ``changed`` is called (on the loop) whenever the
    tools or the state change."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        workspace: Path,
        changed: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
        redact: Callable[[str], str] = lambda text: text,
    ) -> None:
        """``redact``: applied to what the child wrote on stderr before the log or the status
        show it (a server may print its own secrets)."""
        self.name = name
        self.config = config
        self.workspace = workspace
        self._changed = changed
        self._clock = clock
        self.state = State.STARTING
        self.reason = "starting"
        self.listing = Listing()
        self.failures = 0
        """Failures in a row (connections that ended, connects that failed)."""
        self.starts = 0
        """How many times a connection was made (1 after the first start)."""
        self._client: Client | None = None
        self._stop = asyncio.Event()
        self._wake = asyncio.Event()
        self._broken = False
        self._relist = False
        self._task: asyncio.Task[None] | None = None
        self.stderr = ChildStderr()
        """What a stdio child said on stderr at its last start (first lines, cut)."""
        self.stderr_note = ""
        """The child's first stderr lines, redacted, after a failure: for the log and
        ``/mineclaw status`` only (the server's words; never a player's or the model's)."""
        self._redact = redact
        self.confinement_note = ""
        """The OS confinement layers the stdio child could not set (empty: all set)."""
        self._confinement_said = False
        self.first_listing: frozenset[str] | None = None
        """The tools (by ``name_skeleton``) of the first listing this configuration got: one
        listed later (``list_changed``, a restart) gets no more than the server's defaults."""

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(
            self._supervise(), name=f"mcp server {self.name}"
        )

    async def aclose(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._task is not None and self.state is not State.READY:
            # Connecting (a handshake that may never end) or waiting out a backoff: nothing
            # to finish, so stopping does not wait for connect_timeout_ms.
            self._task.cancel()
        if self._task is not None:
            # Closing a stdio server waits for it to exit (the SDK's grace, then a kill).
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self.state = State.CLOSED

    # ---- calls (from turns)

    async def call(
        self, remote: str, arguments: dict[str, Any], *, progress: Progress | None = None
    ) -> CallToolResult:
        client = self._client
        if client is None or self.state is not State.READY:
            raise Unavailable(self.reason)
        try:
            async with asyncio.timeout(self.config.call_timeout_ms / 1000):
                result = await client.call_tool(remote, arguments, progress_callback=progress)
        except TimeoutError:
            raise CallTimedOut(
                f"no answer within {self.config.call_timeout_ms} ms (call_timeout_ms)"
            ) from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._break()
                raise Unavailable("the server closed the connection") from None
            if exc.code == RESULT_TOO_LARGE:
                raise ResultTooLarge(exc.message[:300]) from None
            raise CallFailed(exc.message[:500]) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            self._break()
            raise Unavailable(f"the connection broke ({type(exc).__name__})") from None
        if not isinstance(result, CallToolResult):  # an extension's result: not ours to read
            raise CallFailed("the server answered with a result this client does not read")
        return result

    def _break(self) -> None:
        self._broken = True
        self._wake.set()

    # ---- the supervisor

    async def _supervise(self) -> None:
        while not self._stop.is_set():
            up_since: float | None = None
            try:
                async with self._connected() as (client, ended):
                    up_since = self._clock()
                    self.starts += 1
                    self._client = client
                    self.state, self.reason = State.READY, "ready"
                    self.stderr_note = ""
                    self._note_confinement()
                    self._changed()  # served again with the tools before the line says so
                    listing = self.listing
                    log.info(
                        "MCP server %s ready: %d tools offered, %d not offered",
                        self.name,
                        len(listing.offered),
                        len(listing.refused),
                    )
                    await self._serve(client, ended)
                    reason = "the server ended the connection"
            except TimeoutError:
                reason = (
                    f"no answer within {self.config.connect_timeout_ms} ms while connecting "
                    "(connect_timeout_ms)"
                )
            except Exception as exc:  # any failure to start or list is this server's failure
                reason = _described(exc)
            finally:
                self._client = None
            if self._stop.is_set():
                break
            if up_since is not None and self._clock() - up_since >= STABLE_S:
                self.failures = 0
            self.failures += 1
            self.stderr_note = self._said_on_stderr()
            self._note_confinement()
            said = f"; {self.stderr_note}" if self.stderr_note else ""
            if self.failures > self.config.max_restarts:
                self.state = State.GAVE_UP
                self.reason = f"stopped after {self.failures} failures in a row; last: {reason}"
                log.error("MCP server %s %s%s", self.name, self.reason, said)
                self._changed()
                return
            delay = min(
                MAX_BACKOFF_S, self.config.restart_backoff_ms / 1000 * 2 ** (self.failures - 1)
            )
            self.state = State.RESTARTING
            self.reason = (
                f"restarting (failure {self.failures} of at most {self.config.max_restarts}): "
                f"{reason}"
            )
            log.warning("MCP server %s %s%s", self.name, self.reason, said)
            self._changed()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._stop.wait()

    async def _serve(self, client: Client, ended: asyncio.Event) -> None:
        """Until stopped (return) or the connection ends or breaks (return too; the caller
        tells them apart by ``_stop``)."""
        watch = asyncio.get_running_loop().create_task(ended.wait())
        listed_at = asyncio.get_running_loop().time()
        try:
            while True:
                self._wake.clear()
                if self._stop.is_set() or self._broken or ended.is_set():
                    return
                loop = asyncio.get_running_loop()
                spaced = listed_at + max(RELIST_MIN_S, RELIST_FACTOR * self.listing.checked_s)
                if self._relist and loop.time() >= spaced:
                    self._relist = False
                    async with asyncio.timeout(self.config.connect_timeout_ms / 1000):
                        self.listing = await _listed(self.name, client)
                    listed_at = loop.time()
                    self._note_first_listing()
                    self._changed()
                    continue
                waker = loop.create_task(self._wake.wait())
                try:
                    await asyncio.wait(
                        {watch, waker},
                        timeout=spaced - loop.time() if self._relist else None,
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                finally:
                    waker.cancel()
        finally:
            watch.cancel()

    @contextlib.asynccontextmanager
    async def _connected(self) -> AsyncIterator[tuple[Client, asyncio.Event]]:
        self._broken = self._relist = False
        ended = asyncio.Event()
        async with contextlib.AsyncExitStack() as stack:
            transport = await self._transport(stack)
            client = Client(
                _Watched(transport, ended, admit=self.config.transport == "http"),
                mode="legacy",
                message_handler=self._message,
                client_info=CLIENT_INFO,
                cache=None,
            )
            async with asyncio.timeout(self.config.connect_timeout_ms / 1000):
                await stack.enter_async_context(client)
                self.listing = await _listed(self.name, client)
                self._note_first_listing()
            yield client, ended

    @property
    def own_folder(self) -> Path:
        """The one folder a stdio server may write: ``mcp/<name>/`` of the configuration
        folder (beside ``workspace/``, never inside it or ``data/``)."""
        return self.workspace.parent / OWN_FOLDERS / self.name

    def _note_confinement(self) -> None:
        """The layers the child could not set, once in the log and always in the status."""
        report = self.stderr.confinement
        if report is None:
            return
        missing = {name: state for name, state in report.items() if not state.startswith("on")}
        self.confinement_note = (
            f"confinement: {'; '.join(f'{n} {s}' for n, s in missing.items())}" if missing else ""
        )
        if missing and not self._confinement_said:
            self._confinement_said = True
            log.warning("MCP server %s runs with a %s", self.name, self.confinement_note)

    def _said_on_stderr(self) -> str:
        lines = [" ".join(self._redact(line).split()) for line in self.stderr.lines]
        return f"stderr: {' | '.join(lines)}" if lines else ""

    def _note_first_listing(self) -> None:
        if self.first_listing is None:
            self.first_listing = frozenset(
                name_skeleton(tool.remote) for tool in self.listing.offered
            )

    def late(self, remote: str) -> bool:
        """Whether the tool ``remote`` was not in this configuration's first listing."""
        first = self.first_listing
        return first is not None and name_skeleton(remote) not in first

    async def _transport(self, stack: contextlib.AsyncExitStack) -> Any:
        config = self.config
        if config.transport == "http":
            assert config.url is not None
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=config.header_values,
                    timeout=httpx2.Timeout(config.call_timeout_ms / 1000 + 5),
                    trust_env=False,
                )
            )
            return streamable_http_client(config.url, http_client=http)
        assert config.command is not None
        folder = (self.workspace / config.cwd).resolve()
        if not folder.is_relative_to(self.workspace.resolve()) or not folder.is_dir():
            raise Unavailable(f"cwd {config.cwd!r} is not a folder inside the workspace")
        env = config.env_values
        own = self.own_folder
        own.mkdir(parents=True, exist_ok=True, mode=0o700)
        confine = {"read": readable_paths(config, folder), "write": [str(own), "/dev/null"]}
        command = [
            sys.executable,
            "-I",
            "-c",
            CHILD_START,
            str(config.memory_mb),
            str(config.open_files),
            ",".join(env),
            json.dumps(confine),
            "--",
            config.command,
            *config.args,
        ]
        self.stderr = ChildStderr()
        return stdio_transport(
            command,
            env=get_default_environment() | env,
            cwd=folder,
            line_limit=line_limit(config),
            result_limit=result_line_limit(config),
            stderr=self.stderr,
        )

    async def _message(self, message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            self._relist = True
            self._wake.set()
        elif isinstance(message, Exception):  # the transport failed under the session
            log.info("MCP server %s: transport error: %s", self.name, _described(message))
            self._break()


async def _listed(server: str, client: Client) -> Listing:
    tools = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    offered, refused, checked_s = await checked_off_loop(server, tools)
    for tool in refused:
        log.warning("MCP server %s: tool %r not offered: %s", server, tool.remote, tool.reason)
    return Listing(offered, refused, checked_s)


def _described(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        inner = exc.exceptions[0] if exc.exceptions else exc
        return _described(inner)
    text = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Watched:
    """The transport with its end seen: ``ended`` is set when the server's side of the read
    stream ends (a stdio child that exited), so the supervisor need not poll. ``admit``: only
    what the bridge asked for or uses passes (``server_messages``; stdio does it as it reads)."""

    def __init__(self, inner: Any, ended: asyncio.Event, *, admit: bool) -> None:
        self._inner = inner
        self._ended = ended
        self._admit = admit

    async def __aenter__(self) -> Any:
        read, write = await self._inner.__aenter__()
        if self._admit:
            admission = Admission()
            read, write = AdmittedRead(read, admission), AdmittedWrite(write, admission)
        return _WatchedRead(read, self._ended), write

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


class _WatchedRead:
    def __init__(self, inner: Any, ended: asyncio.Event) -> None:
        self._inner = inner
        self._ended = ended

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._ended.set()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedRead:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:  # last_context and the like
        return getattr(self._inner, name)
