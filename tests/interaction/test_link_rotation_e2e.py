"""Rotating ``link.token`` while the bridge runs, end to end with the testkit JVM: the bridge
drops the link that proved the old token, the plugin links again with the new one (it reads the
token file on every attempt) without a restart of either, and the old token no longer links."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
import websockets

from bridge.link.auth import compute_mac, new_token, read_token

from .processes import BridgeProcess, TestkitProcess, free_port, require_testkit_jar

pytestmark = pytest.mark.jvm

WAIT = 30.0


def rotate(path: Path) -> str:
    """The documented rotation: a new token written beside the file, then renamed over it."""
    token = new_token()
    fresh = path.with_name(path.name + ".new")
    fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(token + "\n")
    os.replace(fresh, path)
    return token


async def close_code_of_hello(url: str, token: str) -> int | None:
    """A plugin stand-in proving ``token``: how the bridge closes the connection."""
    async with websockets.connect(url, open_timeout=WAIT) as ws:
        challenge = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
        nonce, instance = challenge["data"]["nonce"], "eeeeeeee-8b7d-4c6a-9e2f-1a2b3c4d5e6f"
        hello = {
            "v": 1,
            "id": "p-hello",
            "type": "hello",
            "data": {
                "protocol": {"major": 1, "minor": 0},
                "nonce": nonce,
                "mac": compute_mac(token, nonce, instance),
                "instance_id": instance,
                "plugin_version": "0.1.0",
                "minecraft_version": "1.21.10",
                "platform": "testkit",
                "features": [],
            },
        }
        await ws.send(json.dumps(hello))
        await asyncio.wait_for(ws.wait_closed(), WAIT)
        return ws.close_code


async def test_a_rotated_token_relinks_the_plugin_and_refuses_the_old_one(
    tmp_path: Path,
) -> None:
    require_testkit_jar()
    bridge = await BridgeProcess.start(tmp_path / "config", port=free_port())
    testkit: TestkitProcess | None = None
    try:
        testkit = await TestkitProcess.start(bridge.url, bridge.token_file)
        await testkit.wait_event(lambda e: e.get("event") == "link.up", timeout=WAIT)
        old = read_token(bridge.token_file)
        since = len(testkit.events)

        rotate(bridge.token_file)
        down = await testkit.wait_event(
            lambda e: e.get("event") == "link.down", since=since, timeout=WAIT
        )
        assert "rotated" in json.dumps(down)
        await testkit.wait_event(lambda e: e.get("event") == "link.up", since=since, timeout=WAIT)

        # The old token, proved by anyone, is refused (4001) while the plugin stays linked.
        assert await close_code_of_hello(bridge.url, old) == 4001
        assert not [e for e in testkit.events[since:] if e.get("event") == "link.down"][1:], (
            "the plugin was dropped again"
        )
        assert "link.token changed" in bridge.stderr.tail(200)
    finally:
        if testkit is not None:
            await testkit.shutdown()
        await bridge.kill()
