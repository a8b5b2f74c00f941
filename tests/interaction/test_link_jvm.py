"""The bridge and the testkit JVM over a real link: handshake, chat, commands, restarts.

The testkit runs the real plugin core against a stand-in server and is driven through its
JSON-lines control interface (plugin-java/testkit/CONTROL.md).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from .processes import (
    BridgeProcess,
    TestkitProcess,
    free_port,
    require_testkit_jar,
)

pytestmark = pytest.mark.jvm

STEVE_UUID = "3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f"
NOT_CONFIGURED = "(the assistant is not configured yet)"


def event(name: str, **fields: Any) -> Any:
    return lambda e: e.get("event") == name and all(e.get(k) == v for k, v in fields.items())


@contextlib.asynccontextmanager
async def running(config: Path, port: int) -> AsyncIterator[tuple[BridgeProcess, TestkitProcess]]:
    require_testkit_jar()
    bridge = await BridgeProcess.start(config, port=port)
    testkit: TestkitProcess | None = None
    try:
        testkit = await TestkitProcess.start(bridge.url, bridge.token_file)
        yield bridge, testkit
    finally:
        if testkit is not None:
            await testkit.shutdown()
        await bridge.kill()


async def chat(testkit: TestkitProcess, text: str, ref: str) -> dict[str, Any]:
    await testkit.send({"op": "chat", "player": "Steve", "text": text, "ref": ref})
    return await testkit.wait_event(event("chat.outcome", ref=ref))


async def test_the_testkit_links_gets_verdicts_and_relinks_after_the_bridge_is_killed(
    tmp_path: Path,
) -> None:
    config, port = tmp_path / "config", free_port()
    async with running(config, port) as (bridge, testkit):
        await testkit.wait_event(event("link.up"))
        await testkit.send(
            {
                "op": "player.add",
                "name": "Steve",
                "uuid": STEVE_UUID,
                "permissions": ["mineclaw.command.chat"],
            }
        )

        woken = await chat(testkit, "@ai hello", "c1")
        assert woken["outcome"] == "public"
        assert "@ai hello" in woken["shown"]
        # No provider key: only the asker is told, never the whole server.
        await testkit.wait_event(
            lambda e: (
                e.get("event") == "message"
                and NOT_CONFIGURED in e.get("text", "")
                and e.get("to") == "Steve"
            )
        )

        ordinary = await chat(testkit, "good morning", "c2")
        assert ordinary["outcome"] == "public" and "good morning" in ordinary["shown"]

        before_command = len(testkit.events)
        await testkit.send({"op": "command", "sender": "Steve", "args": ["status"], "ref": "m1"})
        await testkit.wait_event(event("command.done", ref="m1"), since=before_command)
        replies = [e for e in testkit.events[before_command:] if e.get("event") == "message"]
        assert any("not available yet" in e.get("text", "") for e in replies), testkit.output()

        before_kill = len(testkit.events)
        await bridge.kill()
        await testkit.wait_event(event("link.down"), since=before_kill)
        offline = await chat(testkit, "@ai are you there", "c3")
        assert offline["outcome"] == "cancelled"

        before_restart = len(testkit.events)
        restarted = await BridgeProcess.start(config, port=port)
        try:
            # The plugin may be in a reconnect back-off (RELINK_TIMEOUT covers its longest pause).
            await testkit.relinked(before_restart)
            again = await chat(testkit, "@ai back again", "c4")
            assert again["outcome"] == "public"
            await testkit.wait_event(
                lambda e: e.get("event") == "message" and NOT_CONFIGURED in e.get("text", ""),
                since=before_restart,
            )
        finally:
            assert await restarted.interrupt() == 0, restarted.output()
        await testkit.wait_event(event("link.down"), since=before_restart)


async def test_a_testkit_with_the_wrong_token_is_refused_and_never_links(tmp_path: Path) -> None:
    require_testkit_jar()
    config, port = tmp_path / "config", free_port()
    bridge = await BridgeProcess.start(config, port=port)
    wrong = tmp_path / "wrong.token"
    wrong.write_text("w" * 43 + "\n")
    wrong.chmod(0o600)
    testkit: TestkitProcess | None = None
    try:
        testkit = await TestkitProcess.start(bridge.url, wrong)
        await bridge.stderr.wait_for(r"handshake from .* refused: the MAC", timeout=30.0)
        down = await testkit.wait_event(event("link.down"))
        assert "AUTH_FAILED" in down["reason"]
        assert not [e for e in testkit.events if e.get("event") == "link.up"]
        assert "w" * 43 not in "\n".join(bridge.stderr.lines + bridge.stdout.lines)
    finally:
        if testkit is not None:
            await testkit.shutdown()
        await bridge.kill()
