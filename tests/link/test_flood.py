"""Unauthenticated connections under a flood, over real loopback sockets in one process.

The caps here are small so a few hundred sockets show what thousands would; the interaction
suite floods a bridge process with 2,000 and reconnects the real plugin through them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bridge.link.server import LinkServer, LinkSettings

from .conftest import WAIT, FakePlugin, RecordingHandler

SMALL_CAPS = LinkSettings(
    port=0, max_unauthenticated=16, max_unauthenticated_per_address=8, refusal_log_interval=0.2
)
UPGRADE = (
    b"GET /link HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


class Idle:
    """Raw sockets that connect (and optionally send ``first``) and then say nothing."""

    def __init__(self) -> None:
        self.writers: list[asyncio.StreamWriter] = []
        self.readers: list[asyncio.StreamReader] = []

    async def open(self, port: int, count: int, first: bytes = b"") -> None:
        for _ in range(count):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            if first:
                writer.write(first)
            self.readers.append(reader)
            self.writers.append(writer)

    async def still_open(self) -> int:
        """How many the bridge has not closed (each is read to its end or to a pause)."""
        alive = 0
        for reader in self.readers:
            with contextlib.suppress(TimeoutError):
                while True:
                    async with asyncio.timeout(0.05):
                        data = await reader.read(65536)
                    if not data:
                        break
            if not reader.at_eof() and reader.exception() is None:
                alive += 1
        return alive

    def close(self) -> None:
        for writer in self.writers:
            writer.transport.abort()


@pytest.fixture
async def idle() -> AsyncIterator[Idle]:
    sockets = Idle()
    yield sockets
    sockets.close()


async def settle(server: LinkServer, limit: int) -> None:
    async with asyncio.timeout(WAIT):
        while server.unauthenticated > limit:
            await asyncio.sleep(0.01)


@pytest.mark.parametrize("settings", [SMALL_CAPS])
async def test_idle_sockets_are_held_within_the_caps_and_the_plugin_still_gets_in(
    server: LinkServer,
    connect_plugin: Any,
    handler: RecordingHandler,
    idle: Idle,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    await idle.open(server.port, 150)  # silent TCP connections
    await idle.open(server.port, 150, UPGRADE)  # upgraded, challenged, never answering
    await settle(server, SMALL_CAPS.max_unauthenticated_per_address)
    assert await idle.still_open() <= SMALL_CAPS.max_unauthenticated_per_address

    plugin: FakePlugin = await connect_plugin()
    result, _ = await plugin.handshake()
    assert result["type"] == "hello.result"
    await asyncio.wait_for(handler.connected.wait(), WAIT)
    assert server.connected

    more = Idle()
    try:
        await more.open(server.port, 100, UPGRADE)  # the flood goes on: the plugin stays
        await settle(server, SMALL_CAPS.max_unauthenticated_per_address)
        await asyncio.sleep(0)
        assert server.connected and handler.connected.is_set()
        assert server.unauthenticated <= SMALL_CAPS.max_unauthenticated_per_address
    finally:
        more.close()

    async with asyncio.timeout(WAIT):  # one summary line, after the interval
        while "closed past the caps" not in caplog.text:
            await asyncio.sleep(0.05)
    summaries = [r for r in caplog.records if "unauthenticated connections" in r.getMessage()]
    assert summaries and "closed past the caps" in summaries[0].getMessage()
    per_connection = [
        r
        for r in caplog.records
        if r.name.startswith("bridge.link") and "unauthenticated connections" not in r.getMessage()
    ]
    # The plugin's own lines only ("linked from", the websockets "listening"): not 400 more.
    assert len(per_connection) < 10, [r.getMessage() for r in per_connection]
    assert all(r.exc_info is None for r in caplog.records)


@pytest.mark.parametrize("settings", [SMALL_CAPS])
async def test_garbage_instead_of_an_upgrade_is_counted_not_logged_with_a_traceback(
    server: LinkServer, idle: Idle, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    await idle.open(server.port, 40, b"\x16\x03\x01 not http at all\r\n\r\n")
    for reader, writer in zip(idle.readers, idle.writers, strict=True):
        await asyncio.wait_for(reader.read(), WAIT)  # the bridge hangs up; so does the peer
        writer.close()
    async with asyncio.timeout(WAIT):
        while "opening handshakes failed" not in caplog.text:
            await asyncio.sleep(0.05)
    assert "Traceback" not in caplog.text
    assert all(r.exc_info is None for r in caplog.records)
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) <= 2


@pytest.mark.parametrize(
    "settings",
    [LinkSettings(port=0, handshake_timeout=0.2, refusal_log_interval=0.2)],
)
async def test_handshake_timeouts_are_summarised_after_the_first(
    server: LinkServer, idle: Idle, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    await idle.open(server.port, 30, UPGRADE)
    async with asyncio.timeout(WAIT):
        while "30 handshakes timed out" not in caplog.text:
            await asyncio.sleep(0.05)
    timed_out = [r for r in caplog.records if "timed out" in r.getMessage()]
    assert len(timed_out) == 2  # the first one in full, then the summary with the count
