"""The real plugin (testkit JVM) reconnects to a real bridge process through a flood of 2,000
idle unauthenticated connections over loopback, from the same address, and the log stays small.

Before the caps, 1,100 such connections exhausted the bridge's file descriptors within seconds
(services often start with a soft limit of 1024, as the bridge here does), the plugin could not
reconnect until they timed out, and every one of them wrote its own log lines.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import random
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest

from .processes import (
    EVENT_TIMEOUT,
    START_TIMEOUT,
    BridgeProcess,
    TestkitProcess,
    free_port,
    require_testkit_jar,
)
from .test_link_jvm import STEVE_UUID, event

pytestmark = pytest.mark.jvm

FLOOD = 2000
SERVICE_SOFT_LIMIT = 1024


@contextlib.contextmanager
def open_files(count: int) -> Iterator[None]:
    """This test process may hold ``count`` sockets (the flood), within the hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = count if hard == resource.RLIM_INFINITY else min(count, hard)
    if wanted < count:
        pytest.fail(f"the open-file hard limit {hard} is below the {count} this test needs")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


class Flood:
    """``size`` connections kept open: each one the bridge closes is opened again about a
    second later (jittered, as a client that reconnects would).

    Half only connect and stay silent; half send a WebSocket upgrade and then stay silent (so
    they get the challenge and never answer it). None ever authenticates.
    """

    def __init__(self, port: int, size: int) -> None:
        self.port = port
        self.size = size
        self.opened = 0
        self.changed = asyncio.Event()
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._keep_open(i)) for i in range(self.size)]

    async def wait_opened(self, count: int) -> None:
        async with asyncio.timeout(START_TIMEOUT):
            while self.opened < count:
                self.changed.clear()
                await self.changed.wait()

    async def _keep_open(self, index: int) -> None:
        key = base64.b64encode(os.urandom(16)).decode()
        upgrade = (
            f"GET /link HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
        while not self._stop.is_set():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                await asyncio.sleep(0.05)  # not listening (between bridges) or out of resources
                continue
            self.opened += 1
            self.changed.set()
            try:
                if index % 2:
                    writer.write(upgrade)
                while await reader.read(65536):
                    pass  # the 101 and the challenge; never answered
            except OSError:
                pass
            finally:
                writer.close()
            await asyncio.sleep(0.5 + random.random())

    async def stop(self) -> None:
        self._stop.set()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def test_the_plugin_reconnects_through_a_flood_of_idle_connections(tmp_path: Path) -> None:
    require_testkit_jar()
    config, port = tmp_path / "config", free_port()
    with open_files(FLOOD + 512):
        bridge = await BridgeProcess.start(config, port=port, open_files=SERVICE_SOFT_LIMIT)
        testkit: TestkitProcess | None = None
        restarted: BridgeProcess | None = None
        flood = Flood(port, FLOOD)
        try:
            testkit = await TestkitProcess.start(bridge.url, bridge.token_file)
            await testkit.wait_event(event("link.up"))
            await testkit.send(
                {
                    "op": "player.add",
                    "name": "Steve",
                    "uuid": STEVE_UUID,
                    "permissions": ["mineclaw.command.chat"],
                }
            )
            flood.start()
            await flood.wait_opened(FLOOD)

            # The plugin must reconnect: a new bridge starts on the same port, into the flood.
            before = len(testkit.events)
            await bridge.kill()
            await testkit.wait_event(event("link.down"), since=before)
            restarted = await BridgeProcess.start(config, port=port, open_files=SERVICE_SOFT_LIMIT)
            flooded_from = flood.opened
            await flood.wait_opened(flooded_from + FLOOD)  # the flood reached the new bridge
            # Bounded by the plugin's back-off (its ceiling is 30 s) and one handshake.
            await testkit.relinked(before)
            await testkit.send({"op": "chat", "player": "Steve", "text": "hi all", "ref": "c1"})
            verdict = await testkit.wait_event(event("chat.outcome", ref="c1"))
            assert verdict["outcome"] == "public", testkit.output()
            assert flood.opened > flooded_from + FLOOD  # still flooding while it got through

            # The log holds no line per connection: thousands were refused by now.
            await flood.wait_opened(flood.opened + FLOOD)
            log = "\n".join(restarted.stderr.lines)
            assert len(restarted.stderr.lines) < 40, restarted.output()
            assert len(log) < 20_000, restarted.output()
            assert "Traceback" not in log, restarted.output()
            # ...but one summary line per interval.
            await restarted.stderr.wait_for(
                r"unauthenticated connections in the last \d+ s: .*\d+ closed past the caps",
                timeout=EVENT_TIMEOUT,
            )
            await flood.stop()
            assert len(restarted.stderr.lines) < 40, restarted.output()
        finally:
            await flood.stop()
            if testkit is not None:
                await testkit.shutdown()
            if restarted is not None:
                await restarted.kill()
            await bridge.kill()
