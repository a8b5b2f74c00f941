"""State the server owns survives a dropped link (issue 49, part 6): a real bridge
(``python -m bridge serve``), the testkit JVM, and the real WebSocket between them carried by a
loopback forwarder that cuts it as a network blip would. When the same server links again,
listen mode, a player's listen opt-out and the operator's model switch are as they were; only a
command or a reload changes them."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.link_proxy import LinkProxy
from tests.app.conftest import providers_yml
from tests.app.scripted_provider import ScriptedProvider

from .processes import (
    BridgeProcess,
    TestkitPlayers,
    TestkitProcess,
    free_port,
    require_testkit_jar,
)

pytestmark = pytest.mark.jvm

OPERATOR = ["mineclaw.command.chat", "mineclaw.command.listen", "mineclaw.command.model"]
PLAYER = ["mineclaw.command.chat"]
# Every listen-mode line that passes the gates starts a turn: the verdict shows which do.
CONFIG = (
    "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
    "listen:\n  answer_every_line: true\n"
)


@dataclass
class World(TestkitPlayers):
    testkit: TestkitProcess
    proxy: LinkProxy

    async def drop_and_relink(self) -> None:
        since = self.mark()
        self.proxy.drop()
        await self.testkit.wait_event(lambda e: e.get("event") == "link.down", since=since)
        await self.testkit.relinked(since)

    async def carried(self, player: str, text: str) -> bool:
        """Whether ``player``'s plain line was taken by listen mode (shown with the AI prefix)."""
        outcome = await self.chat(player, text)
        assert outcome["outcome"] == "public", outcome
        shown: str = outcome["shown"]
        return shown.startswith("[AI] ")


@contextlib.asynccontextmanager
async def world(tmp_path: Path) -> AsyncIterator[World]:
    require_testkit_jar()
    provider = ScriptedProvider()
    await provider.start()
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.yml").write_text(CONFIG)
    (config / "providers.yml").write_text(providers_yml(provider.port))
    bridge = await BridgeProcess.start(config, port=free_port())
    proxy = LinkProxy(bridge.url)
    await proxy.start()
    testkit: TestkitProcess | None = None
    try:
        testkit = await TestkitProcess.start(proxy.url, bridge.token_file)
        await testkit.wait_event(lambda e: e.get("event") == "link.up")
        yield World(testkit, proxy)
    finally:
        if testkit is not None:
            await testkit.shutdown()
        await bridge.kill()
        await proxy.close()
        await provider.stop()


async def test_listen_mode_its_opt_outs_and_the_model_switch_survive_a_dropped_link(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        await w.add("Steve", OPERATOR)
        await w.add("Alex", PLAYER)
        assert any("is on" in line for line in await w.command("Steve", "listen", "on"))
        assert any(
            "no longer sent" in line for line in await w.command("Alex", "listen", "ignore-me")
        )
        switched = " ".join(await w.command("Steve", "model", "local/m2"))
        assert "local/m2" in switched and "cannot" not in switched, switched
        assert not await w.carried("Alex", "nice weather today")

        await w.drop_and_relink()
        assert w.proxy.drops == 1

        status = " | ".join(await w.command("Steve", "status"))
        assert "listen: on" in status and "model: local/m2" in status, status
        assert any("is on" in line for line in await w.command("Steve", "listen", "status"))
        # Alex's opt-out holds; Steve's line is still taken by listen mode.
        assert not await w.carried("Alex", "the creepers are loud")
        assert await w.carried("Steve", "where did I leave my boat")

        # A second drop in a row changes nothing either.
        await w.drop_and_relink()
        status = " | ".join(await w.command("Steve", "status"))
        assert "listen: on" in status and "model: local/m2" in status, status
        assert not await w.carried("Alex", "still here")
