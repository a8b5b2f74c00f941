"""A bridge that hangs rather than dies, end to end: two ``python -m bridge serve`` processes
with the same link token, one testkit server listing both, and the bridge in use paused with
SIGSTOP. A paused process keeps its TCP connections open (the kernel answers for it), so the
plugin only learns it is gone from its silence: the plugin pings, gives the bridge up after
``--link-timeout-ms`` and moves on to the next bridge at once.

Before the plugin pinged, the server stayed linked to the paused bridge for as long as the
pause lasted (issue 39): every wake got the offline line and nothing moved on.

Each bridge has a store of its own (a folder of its own; with ``--storage=postgresql`` a
database of its own): what is tested here is the link. Leases shared through one database are
tested by ``test_lease_expiry_e2e.py``.
"""

from __future__ import annotations

import contextlib
import secrets
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from app.scripted_provider import ScriptedProvider

from .processes import BridgeProcess, TestkitPlayers, TestkitProcess, free_port, require_testkit_jar
from .test_turns_e2e import NO_COOLDOWNS, OP, REPLY_PREFIX, write_config

pytestmark = pytest.mark.jvm

WAIT = 60.0
LINK_TIMEOUT_MS = 1500


class Plugin(TestkitPlayers):
    def __init__(self, testkit: TestkitProcess) -> None:
        self.testkit = testkit


@contextlib.asynccontextmanager
async def two_bridges_one_token(
    tmp_path: Path,
) -> AsyncIterator[tuple[BridgeProcess, BridgeProcess, Plugin, ScriptedProvider]]:
    require_testkit_jar()
    provider = ScriptedProvider()
    await provider.start()
    token = secrets.token_urlsafe(32)
    running: list[BridgeProcess] = []
    testkit: TestkitProcess | None = None
    try:
        for name in ("a", "b"):
            folder = tmp_path / name
            write_config(folder, provider.port, NO_COOLDOWNS)
            token_file = folder / "link.token"
            token_file.write_text(token + "\n")
            token_file.chmod(0o600)
            running.append(await BridgeProcess.start(folder, port=free_port()))
        first, second = running
        testkit = await TestkitProcess.start(
            first.url,
            first.token_file,
            "--url",
            second.url,
            "--link-timeout-ms",
            str(LINK_TIMEOUT_MS),
        )
        await testkit.wait_event(lambda e: e.get("event") == "link.up")
        await first.stderr.wait_for(r"linked from", timeout=WAIT)
        yield first, second, Plugin(testkit), provider
    finally:
        for bridge in running:  # a paused one is killed all the same
            with contextlib.suppress(ProcessLookupError):
                bridge.process.send_signal(signal.SIGCONT)
        if testkit is not None:
            await testkit.shutdown()
        for bridge in running:
            await bridge.kill()
        await provider.stop()


async def test_a_paused_bridge_is_given_up_and_the_next_one_serves(tmp_path: Path) -> None:
    async with two_bridges_one_token(tmp_path) as (first, second, plugin, provider):
        await plugin.add("Steve", OP)
        provider.answer("Before the pause.")
        since = plugin.mark()
        assert (await plugin.chat("Steve", "@ai first"))["outcome"] == "public"
        await plugin.message("*", "Before the pause.", since)

        since = plugin.mark()
        first.process.send_signal(signal.SIGSTOP)
        down = await plugin.testkit.wait_event(
            lambda e: e.get("event") == "link.down", since=since, timeout=WAIT
        )
        assert "sent nothing" in down["reason"], down
        await plugin.testkit.wait_event(
            lambda e: e.get("event") == "link.up", since=since, timeout=WAIT
        )
        await second.stderr.wait_for(r"linked from", timeout=WAIT)

        # The second bridge answers while the first is still paused.
        provider.answer("While the first is paused.")
        since = plugin.mark()
        assert (await plugin.chat("Steve", "@ai second"))["outcome"] == "public"
        reply = await plugin.message("*", "While the first is paused.", since)
        assert reply.startswith(REPLY_PREFIX) or "While the first is paused." in reply
