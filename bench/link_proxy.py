"""A loopback TCP forwarder in front of a bridge, whose connections a bench (or the soak) cuts
at will: a link dropped mid-answer, as a flaky network between a server and its bridge drops
it. Bytes pass through untouched (the WebSocket handshake and frames are the plugin's and the
bridge's); ``drop`` closes every connection open now, both ways, and new ones are forwarded
again at once. ``hold_answers`` keeps what the bridge sends from reaching the plugin (an answer
written to a link that is about to drop) until the next ``drop``.
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit


class LinkProxy:
    """Forwards ``127.0.0.1:<port>`` to the bridge at ``target_url`` (``ws://127.0.0.1:P/path``)."""

    def __init__(self, target_url: str) -> None:
        parts = urlsplit(target_url)
        assert parts.hostname == "127.0.0.1" and parts.port is not None, target_url
        self.target_port = parts.port
        self._path = parts.path
        self.port = 0
        self.drops = 0
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self.connected = asyncio.Event()
        """Set when a connection is forwarded (cleared by ``drop``)."""
        self._answers = asyncio.Event()
        self._answers.set()

    @property
    def open_links(self) -> int:
        """Connections forwarded now (two ends each)."""
        return len(self._open) // 2

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}{self._path}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        self._open.update((writer, up_writer))
        self.connected.set()
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer, self._answers))
        finally:
            for end in (writer, up_writer):
                self._open.discard(end)
                end.close()

    def hold_answers(self) -> None:
        """From now on, what the bridge sends waits here (the plugin reads nothing more) until
        ``drop`` cuts the connections."""
        self._answers.clear()

    def drop(self) -> None:
        """Cut every forwarded connection now (the peers see the TCP connection reset)."""
        self.drops += 1
        self._answers.set()
        self.connected.clear()
        for writer in list(self._open):
            transport = writer.transport
            transport.abort()
        self._open.clear()

    async def close(self) -> None:
        self.drop()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


async def _pipe(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, gate: asyncio.Event | None = None
) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await reader.read(65536):
            if gate is not None:
                await gate.wait()
            writer.write(data)
            await writer.drain()
    writer.close()
