"""Several servers on one bridge, end to end: three testkit JVMs (lobby, survival, creative),
each linking with its own ``--server-id`` and token, one ``python -m bridge serve`` with a
``servers.yml``, and the scripted provider.

Waits are on observable events, each bounded; nothing here measures time.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from app.scripted_provider import ScriptedProvider

from .processes import (
    BridgeProcess,
    TestkitPlayers,
    TestkitProcess,
    free_port,
    require_testkit_jar,
)
from .test_turns_e2e import OP, write_config

pytestmark = pytest.mark.jvm

SERVERS = ("lobby", "survival", "creative")
TOKENS = {server: (server[0] * 43) for server in SERVERS}
OP_TOOLS = [*OP, "mineclaw.tool.run_command"]
NO_COOLDOWNS = "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
SURVIVAL_MESSAGES = (
    "schema: 1\nchat:\n"
    "  empty_question: '<gray>Survival asks: a question after <prefix>, please.'\n"
)


def servers_yml() -> str:
    lines = ["schema: 1", "servers:"]
    for server in SERVERS:
        lines += [f"  {server}:", f"    token: ${{{server.upper()}_LINK_TOKEN}}"]
        if server == "survival":
            lines.append("    messages: servers/survival-message.yml")
    return "\n".join(lines) + "\n"


@dataclass
class Server(TestkitPlayers):
    """One testkit server of the network, driven as its players would."""

    name: str
    testkit: TestkitProcess


@dataclass
class Network:
    config: Path
    bridge: BridgeProcess
    provider: ScriptedProvider
    servers: dict[str, Server]


@contextlib.asynccontextmanager
async def network(tmp_path: Path) -> AsyncIterator[Network]:
    require_testkit_jar()
    provider = ScriptedProvider()
    await provider.start()
    config = tmp_path / "config"
    write_config(
        config,
        provider.port,
        NO_COOLDOWNS,
        {"servers.yml": servers_yml(), "servers/survival-message.yml": SURVIVAL_MESSAGES},
    )
    env = config / ".env"
    env.write_text("".join(f"{s.upper()}_LINK_TOKEN={TOKENS[s]}\n" for s in SERVERS))
    env.chmod(0o600)
    bridge = await BridgeProcess.start(config, port=free_port())
    started: list[TestkitProcess] = []
    try:
        await bridge.stdout.wait_for(
            r"^servers in servers.yml: creative, lobby, survival$", timeout=30
        )
        servers: dict[str, Server] = {}
        for server in SERVERS:
            testkit = await TestkitProcess.start(
                bridge.url, bridge.token_file, "--token", TOKENS[server], "--server-id", server
            )
            started.append(testkit)
            await testkit.wait_event(lambda e: e.get("event") == "link.up")
            servers[server] = Server(server, testkit)
        yield Network(config, bridge, provider, servers)
    finally:
        for testkit in started:
            await testkit.shutdown()
        await bridge.kill()
        await provider.stop()


def _users(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


async def test_three_servers_keep_their_own_sessions_policies_and_verdicts(tmp_path: Path) -> None:
    async with network(tmp_path) as net:
        lobby, survival, creative = (net.servers[s] for s in SERVERS)
        for server in (lobby, survival, creative):
            await server.add("Steve", OP)

        # The lobby's provider answer hangs: a stuck turn on one server.
        held = net.provider.held("The lobby ", "answer.")
        woken = await lobby.chat("Steve", "@ai lobby question")
        assert woken["outcome"] == "public"
        await asyncio.wait_for(held.streaming.wait(), 30)

        # Survival reloads the configuration while the lobby's turn hangs; creative's players
        # keep getting verdicts and their own turns throughout.
        net.provider.answer("Creative answer.")
        since = creative.mark()
        reload_task = asyncio.create_task(survival.command("Steve", "reload"))
        assert (await creative.chat("Steve", "@ai creative question"))["outcome"] == "public"
        for n in range(5):
            passed = await creative.chat("Steve", f"just chatting {n}")
            assert passed["outcome"] == "public" and passed["shown"] == f"<Steve> just chatting {n}"
        await creative.message("*", "Creative answer.", since)
        assert any("reloaded" in line.lower() for line in await reload_task)

        # Separate sessions: creative's request carried only creative's question.
        creative_body = net.provider.bodies()[-1]
        assert _users(creative_body) == ["creative question"]

        # Per-server policy: survival's own message.yml line; the others the network-wide one.
        since = survival.mark()
        assert (await survival.chat("Steve", "@ai"))["outcome"] == "cancelled"
        await survival.message("Steve", "Survival asks", since)
        since = creative.mark()
        assert (await creative.chat("Steve", "@ai"))["outcome"] == "cancelled"
        hint = await creative.message("Steve", "Ask a question after @ai", since)
        assert "Survival" not in hint

        # Listen mode is per server: on for survival only.
        since_lobby, since_survival = lobby.mark(), survival.mark()
        assert any("on" in line for line in await survival.command("Steve", "listen", "on"))
        await survival.testkit.wait_event(
            lambda e: e.get("event") == "link.state" and e.get("forward") == "all",
            since=since_survival,
        )
        assert not any(
            e.get("event") == "link.state" and e.get("forward") == "all"
            for e in lobby.testkit.events[since_lobby:]
        )
        assert (await creative.chat("Steve", "ordinary line"))["shown"] == "<Steve> ordinary line"

        # The lobby's turn finishes once the provider answers; its session held nothing else.
        since = lobby.mark()
        held.release.set()
        await lobby.message("*", "The lobby answer.", since)
        assert _users(net.provider.bodies()[0]) == ["lobby question"]
        # A second lobby question replays only the lobby's own history.
        net.provider.answer("Again.")
        assert (await lobby.chat("Steve", "@ai second lobby question"))["outcome"] == "public"
        await lobby.message("*", "Again.", since)
        assert _users(net.provider.bodies()[-1]) == ["lobby question", "second lobby question"]


async def test_a_player_moving_server_has_their_pending_prompt_closed(tmp_path: Path) -> None:
    async with network(tmp_path) as net:
        lobby, survival = net.servers["lobby"], net.servers["survival"]
        await lobby.add("Steve", OP_TOOLS)
        await lobby.add("Alex", OP)
        # Steve's turn asks to run a command as Alex: Alex is prompted on the lobby.
        net.provider.call_tools(
            (
                "run_command",
                {"command": "give Alex minecraft:bread 2", "intent": "feed Alex", "player": "Alex"},
            )
        )
        net.provider.answer("Alex has gone elsewhere.")
        since = lobby.mark()
        assert (await lobby.chat("Steve", "@ai give Alex bread"))["outcome"] == "public"
        await lobby.testkit.wait_event(
            lambda e: e.get("event") == "approval" and e.get("to") == "Alex", since=since
        )
        # Alex arrives on survival (the proxy's join there comes before the lobby's quit).
        await survival.add("Alex", OP)
        await lobby.message("*", "Alex has gone elsewhere.", since)
        # The prompt was closed as the player being gone: the model was told so, and nothing
        # was dispatched on either server.
        results = [m for m in net.provider.bodies()[-1]["messages"] if m.get("role") == "tool"]
        assert results and "target_offline" in results[-1]["content"]
        for server in (lobby, survival):
            assert not [e for e in server.testkit.events if e.get("event") == "dispatch"]
