"""The MCP client wired in the application: started with the bridge, its tools served to the
players the gates allow, followed by reloads, named in /mineclaw status."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from bridge.mcp.connection import State
from bridge.tools.registry import CallContext
from tests.app.conftest import NO_COOLDOWNS, App, open_app, provider, write_config
from tests.app.scripted_provider import ScriptedProvider

from .harness import SERVERS, TOOLBOX, WAIT

__all__ = ["provider"]  # the scripted model server of the app tests, as a fixture here
GUEST: list[str] = []
MEMBER = ["mineclaw.command.chat", "mineclaw.budget.member", "mineclaw.tool.wiki"]
PLAIN = ["mineclaw.command.chat", "mineclaw.budget.member"]


def config_yml(enabled: bool = True, server: dict[str, object] | None = None) -> str:
    config = yaml.safe_load(NO_COOLDOWNS)
    # With budgets on, a player holding no tier is a guest.
    config["budgets"] = {"enabled": True, "tiers": {"member": {"day_tokens": 100000}}}
    config["mcp"] = {
        "enabled": enabled,
        "servers": {
            "wiki": server
            or {
                "transport": "stdio",
                "command": sys.executable,
                "args": [TOOLBOX],
                "read": [str(SERVERS)],
                "tools": {"fail": {"permission": "mineclaw.tool.wiki"}},
                "unlisted": "offer",  # the other tools: the server's settings, no review
            }
        },
    }
    return yaml.safe_dump(config)


@pytest.fixture
async def app(tmp_path: Path, provider: ScriptedProvider) -> AsyncIterator[App]:
    config = tmp_path / "config"
    write_config(config, provider.port, config_yml())
    opened = await open_app(config, provider)
    yield opened
    await opened.runtime.aclose()


async def served_tools(app: App, granted: list[str]) -> set[str]:
    return {spec.name for spec in app.runtime.served.invoker(frozenset(granted)).tools.specs}


async def test_the_servers_tools_are_served_to_whom_the_gates_allow(app: App) -> None:
    runtime = app.runtime
    changed = asyncio.Event()
    runtime.mcp.add_listener(changed.set)
    async with asyncio.timeout(WAIT):
        while "mcp__wiki__echo" not in await served_tools(app, MEMBER):
            changed.clear()
            await changed.wait()
    member = await served_tools(app, MEMBER)
    assert {"mcp__wiki__echo", "mcp__wiki__fail"} <= member
    plain = await served_tools(app, PLAIN)
    assert "mcp__wiki__echo" in plain and "mcp__wiki__fail" not in plain
    assert not {name for name in await served_tools(app, GUEST) if name.startswith("mcp__")}

    [status] = [line for line in await app.command("status") if "MCP server" in line]
    assert "wiki: ready" in status

    invoker = runtime.served.invoker(frozenset(MEMBER))
    outcome = await invoker.invoke(
        "mcp__wiki__echo", json.dumps({"text": "via app"}), CallContext("t", "c", "u", "Steve")
    )
    assert outcome.ok and "via app" in outcome.result["text"]

    # A reload that switches MCP off stops the session and takes the tools away.
    (app.config / "config.yml").write_text(config_yml(enabled=False))
    await app.command("reload")
    assert not {n for n in await served_tools(app, MEMBER) if n.startswith("mcp__")}
    assert runtime.mcp.connections == {}
    assert not [line for line in await app.command("status") if "MCP server" in line]


async def test_a_server_that_never_answers_holds_no_verdict_and_no_turn(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    """The server's handshake never ends (connect_timeout_ms is far away): chat is decided and
    a turn answered meanwhile, without its tools."""
    config = tmp_path / "config"
    silent = {
        "transport": "stdio",
        "command": sys.executable,
        "args": [str(SERVERS / "silent.py")],
        "read": [str(SERVERS)],
        "connect_timeout_ms": 120_000,
    }
    write_config(config, provider.port, config_yml(server=silent))
    app = await open_app(config, provider)
    try:
        provider.answer("Hello without the wiki.")
        verdict = await app.chat("@ai hello", granted=MEMBER)
        assert verdict.decision == "accept"
        await app.turn_done()
        assert app.runtime.mcp.connections["wiki"].state is State.STARTING
        assert "wiki: starting" in " ".join(await app.command("status"))
        sent = provider.bodies()[-1]
        assert not [t for t in sent.get("tools", []) if t["function"]["name"].startswith("mcp__")]
    finally:
        await app.runtime.aclose()


async def wait_for_tool(app: App, name: str) -> None:
    changed = asyncio.Event()
    app.runtime.mcp.add_listener(changed.set)
    async with asyncio.timeout(WAIT):
        while name not in await served_tools(app, MEMBER):
            changed.clear()
            await changed.wait()


@pytest.mark.parametrize("shared", [False, True])
async def test_an_mcp_result_is_personal_unless_the_owner_marks_the_server_shared(
    tmp_path: Path, provider: ScriptedProvider, shared: bool
) -> None:
    server: dict[str, object] = {
        "transport": "stdio",
        "command": sys.executable,
        "args": [TOOLBOX],
        "read": [str(SERVERS)],
    }
    if shared:
        server["shared"] = True
    config = tmp_path / "config"
    write_config(config, provider.port, config_yml(server=server))
    app = await open_app(config, provider)
    try:
        await wait_for_tool(app, "mcp__wiki__echo")
        tool = app.runtime.served.invoker(frozenset(MEMBER)).tools.tools["mcp__wiki__echo"]
        assert tool.personal is not shared
    finally:
        await app.runtime.aclose()
