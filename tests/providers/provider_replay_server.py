"""A real local HTTP/1.1 server that replays provider recordings and scripted faults.

Tests run it in their own event loop; the benchmark runs it as a separate process
(``python provider_replay_server.py``, which prints its port) so its CPU time is not counted
against either client. It binds 127.0.0.1 only and serves each recording's body verbatim,
one chunk per SSE event, as a provider's streaming endpoint does.

Routing: a scripted reply queued with ``script`` wins; otherwise a path of the form
``/rec/<recording path without .yaml>/<interaction index>/...`` serves that recording.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent


def vectors_dir() -> Path:
    """``tests/data`` in this repository, unless ``MINECLAW_VECTORS`` says otherwise.

    The recordings and the schema are copies kept in the repository (see ``tests/data/README.md``):
    a clone must pass its tests with nothing beside it.
    """
    override = os.environ.get("MINECLAW_VECTORS")
    if override:
        return Path(override)
    return HERE.parent / "data"


def recordings_dir() -> Path:
    return vectors_dir() / "provider-recordings"


@dataclass(frozen=True)
class Interaction:
    uri: str
    request_body: dict[str, Any]
    status: int
    content_type: str
    body: bytes


def load_recording(path: Path) -> list[Interaction]:
    document = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    out: list[Interaction] = []
    for entry in document["interactions"]:
        request, response = entry["request"], entry["response"]
        body = request.get("parsed_body")
        if body is None:
            body = json.loads(request["body"])
        headers = {k.lower(): v for k, v in response["headers"].items()}
        content_type = headers.get("content-type", ["text/event-stream"])[0]
        out.append(
            Interaction(
                uri=request["uri"],
                request_body=body,
                status=int(response["status"]["code"]),
                content_type=content_type,
                body=response["body"]["string"].encode("utf-8"),
            )
        )
    return out


def sse_chunks(body: bytes) -> list[bytes]:
    """The body cut after each blank line, so each event travels in its own HTTP chunk."""
    parts = body.split(b"\n\n")
    chunks = [part + b"\n\n" for part in parts[:-1]]
    if parts[-1]:
        chunks.append(parts[-1])
    return chunks


@dataclass
class Reply:
    """One scripted answer. ``reset_after_chunks`` aborts the connection after that many body
    chunks; ``stall`` = "headers" waits before the status line, "body" after the headers,
    until the server stops."""

    status: int = 200
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    reset_after_chunks: int | None = None
    stall: str | None = None
    hold_open: bool = False
    """Send every chunk, then keep the body open (no last chunk) until the server stops."""
    close_unanswered: bool = False
    """Read the request, then close the connection without a status line: what a server
    does to a kept-alive connection it closed idle as the client reused it."""


@dataclass(frozen=True)
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


LISTING = Reply(
    status=200, content_type="application/json", chunks=[b'{"object":"list","data":[{"id":"m"}]}']
)


class ReplayServer:
    def __init__(self) -> None:
        self.requests: list[ReceivedRequest] = []
        self.probes: list[ReceivedRequest] = []
        self._script: list[Reply] = []
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._stop = asyncio.Event()
        self._recordings: dict[Path, list[Interaction]] = {}
        self.connections = 0
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def recording_url(self, relative: str, index: int = 0) -> str:
        return f"http://127.0.0.1:{self.port}/rec/{relative.removesuffix('.yaml')}/{index}"

    def script(self, *replies: Reply) -> None:
        self._script.extend(replies)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._on_connection, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.close()
        # Aborting the sockets lets every handler finish on its own: cancelling a handler
        # task makes asyncio log its CancelledError as an unhandled error on Python 3.11.
        for writer in list(self._writers):
            writer.transport.abort()
        if self._handlers:
            await asyncio.wait(self._handlers, timeout=5)
        if self._server is not None:
            await asyncio.wait_for(self._server.wait_closed(), timeout=5)

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self._writers.add(writer)
        self.connections += 1
        try:
            while not reader.at_eof():
                request = await self._read_request(reader)
                if request is None:
                    break
                if request.method == "GET" and request.path.endswith("/models"):
                    # A status probe (`bridge.providers.probe`): answered with a listing, kept
                    # apart so it neither takes a scripted reply nor counts as a model request.
                    self.probes.append(request)
                    if not await self._send(LISTING, writer):
                        break
                    continue
                self.requests.append(request)
                if not await self._answer(request, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._handlers.discard(task)
            self._writers.discard(writer)
            writer.close()

    async def _read_request(self, reader: asyncio.StreamReader) -> ReceivedRequest | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        return ReceivedRequest(method, path, headers, body)

    def _reply_for(self, request: ReceivedRequest) -> Reply:
        if self._script:
            return self._script.pop(0)
        if request.path.startswith("/rec/"):
            return self._recording_reply(request.path)
        return Reply(status=404, content_type="application/json", chunks=[b'{"error":"none"}'])

    def _recording_reply(self, path: str) -> Reply:
        parts = path[len("/rec/") :].split("/")
        for cut in range(len(parts) - 1, 0, -1):
            if parts[cut].isdigit():
                candidate = recordings_dir() / ("/".join(parts[:cut]) + ".yaml")
                if candidate.is_file():
                    if candidate not in self._recordings:
                        self._recordings[candidate] = load_recording(candidate)
                    interaction = self._recordings[candidate][int(parts[cut])]
                    return Reply(
                        status=interaction.status,
                        content_type=interaction.content_type,
                        chunks=sse_chunks(interaction.body),
                    )
        return Reply(status=404, content_type="application/json", chunks=[b'{"error":"none"}'])

    async def _answer(self, request: ReceivedRequest, writer: asyncio.StreamWriter) -> bool:
        return await self._send(self._reply_for(request), writer)

    async def _send(self, reply: Reply, writer: asyncio.StreamWriter) -> bool:
        if reply.close_unanswered:
            return False
        if reply.stall == "headers":
            await self._stop.wait()
            return False
        reason = {200: "OK", 429: "Too Many Requests", 500: "Internal Server Error"}.get(
            reply.status, "Status"
        )
        head = [f"HTTP/1.1 {reply.status} {reason}", f"content-type: {reply.content_type}"]
        head += [f"{name}: {value}" for name, value in reply.headers.items()]
        head.append("transfer-encoding: chunked")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        if reply.stall == "body":
            await self._stop.wait()
            return False
        for number, chunk in enumerate(reply.chunks):
            if reply.reset_after_chunks is not None and number >= reply.reset_after_chunks:
                writer.transport.abort()
                return False
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            await writer.drain()
        if reply.hold_open:
            await self._stop.wait()
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


async def _serve_forever() -> None:
    server = ReplayServer()
    await server.start()
    print(server.port, flush=True)
    # The parent ends this process by closing its stdin: no stray server outlives a benchmark.
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    await server.stop()


if __name__ == "__main__":
    asyncio.run(_serve_forever())
