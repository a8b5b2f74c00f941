"""A real LinkServer on a loopback port and a fake plugin speaking to it with websockets."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from bridge.link.handler import CURRENT_REQUEST_ID, Link
from bridge.link.messages import ChatRequest, ChatVerdict, Hello
from bridge.link.server import LinkServer, LinkSettings
from tests.link.placeholder import PlaceholderHandler

from .helpers import TOKEN, hello

WAIT = 5.0
"""The bound on every wait in these tests; nothing is expected to take close to it."""


class RecordingHandler(PlaceholderHandler):
    """The placeholder, plus events the tests can await and a chat that can be made to fail."""

    def __init__(self) -> None:
        super().__init__()
        self.connected = asyncio.Event()
        self.disconnected = asyncio.Event()
        self.hellos: list[Hello] = []
        self.fail_chat = False
        self.stall_chat = False
        self.chat_ids: list[str | None] = []
        self.expired: asyncio.Queue[str] = asyncio.Queue()

    async def on_connected(self, link: Link, hello: Hello) -> None:
        await super().on_connected(link, hello)
        self.hellos.append(hello)
        self.disconnected.clear()
        self.connected.set()

    async def on_disconnected(self) -> None:
        await super().on_disconnected()
        self.connected.clear()
        self.disconnected.set()

    async def on_chat_expired(self, request_id: str) -> None:
        self.expired.put_nowait(request_id)

    async def on_chat(self, request: ChatRequest) -> ChatVerdict:
        self.chat_ids.append(CURRENT_REQUEST_ID.get())
        if self.fail_chat:
            raise RuntimeError("handler bug")
        if self.stall_chat:
            await asyncio.Event().wait()  # never set: a handler that hangs
        return await super().on_chat(request)


class FakePlugin:
    """A plugin stand-in over a real WebSocket; every receive is bounded."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    async def recv(self) -> dict[str, Any]:
        raw = await asyncio.wait_for(self.ws.recv(), WAIT)
        parsed: dict[str, Any] = json.loads(raw)
        return parsed

    async def send(self, text: str | bytes) -> None:
        await self.ws.send(text)

    async def handshake(self, **hello_args: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        challenge = await self.recv()
        await self.send(hello(challenge["data"]["nonce"], **hello_args))
        return await self.recv(), await self.recv()

    async def closed_with(self) -> int | None:
        await asyncio.wait_for(self.ws.wait_closed(), WAIT)
        return self.ws.close_code


@pytest.fixture
def handler() -> RecordingHandler:
    return RecordingHandler()


@pytest.fixture
def settings() -> LinkSettings:
    return LinkSettings(port=0)


@pytest.fixture
async def server(handler: RecordingHandler, settings: LinkSettings) -> AsyncIterator[LinkServer]:
    async with LinkServer(token=TOKEN, handler=handler, settings=settings) as running:
        yield running


@pytest.fixture
def connect_plugin(server: LinkServer) -> Any:
    opened: list[ClientConnection] = []

    async def _connect(**options: Any) -> FakePlugin:
        options.setdefault("max_size", None)
        ws = await asyncio.wait_for(connect(server.url, **options), WAIT)
        opened.append(ws)
        return FakePlugin(ws)

    yield _connect
    for ws in opened:
        ws.transport.abort()


@pytest.fixture
async def plugin(connect_plugin: Any, handler: RecordingHandler) -> FakePlugin:
    fake: FakePlugin = await connect_plugin()
    await fake.handshake()
    await asyncio.wait_for(handler.connected.wait(), WAIT)
    return fake
