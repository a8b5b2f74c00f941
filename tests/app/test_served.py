"""The served configuration: one per published version, published with its plane or not at all,
held by a turn from start to end, provider clients reused across versions."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bridge.app.serving.served import NotConfiguredError
from bridge.app.wiring.runtime import Runtime
from bridge.errors import ConfigError

from .conftest import NO_COOLDOWNS, App, hello, providers_yml, write_config
from .scripted_provider import HeldReply, ScriptedProvider
from .test_text_boundaries import tool_call

CHAT = ["mineclaw.command.chat"]


def client_of(runtime: Runtime) -> object:
    return runtime.snapshot(()).stream.func.__self__  # type: ignore[attr-defined]


async def test_a_reload_that_fails_to_build_keeps_the_old_plane_and_served_config(
    app: App,
) -> None:
    before = app.runtime.served
    assert before.plane is app.runtime.plane
    first_client = client_of(app.runtime)
    # A folder the store loads but the build refuses (a skill naming a Function that does not
    # exist), with a changed provider key in the same reload: nothing of it may be served or
    # left open.
    skill = app.config / "workspace" / "skills" / "extra.md"
    skill.write_text("---\nid: extra\nname: Extra\ndescription: x\n---\nfunction:no-such\n")
    (app.config / "providers.yml").write_text(providers_yml(app.provider.port, key="sk-other-1"))
    with pytest.raises(ConfigError, match=r"extra\.md.*names unknown Function 'no-such'"):
        app.runtime.reload()
    assert app.runtime.served is before
    assert app.runtime.plane is before.plane and app.runtime.plane.version == 1
    assert client_of(app.runtime) is first_client
    [line] = await app.command("reload")
    assert "Reload failed" in line and "no-such" in line
    assert app.runtime.served is before

    skill.unlink()
    assert "version 2" in (await app.command("reload"))[0]
    after = app.runtime.served
    assert after is not before and after.plane is app.runtime.plane
    assert after.plane.version == 2 and client_of(app.runtime) is not first_client


async def test_a_running_turn_keeps_its_served_config_and_its_replaced_client(app: App) -> None:
    """A reload during a turn changes the key (a new client) and AGENTS.md: the turn's second
    request still goes through the old client with the old instructions; the old client is
    closed once the turn is over, and the next turn uses the new one."""
    (app.config / "workspace" / "AGENTS.md").write_text("You are version one.\n")
    await app.command("reload")
    old_client = client_of(app.runtime)
    held = HeldReply(chunks=tool_call("list", "{}"))
    app.provider.script(held)
    app.provider.answer("Listed.")
    assert (await app.chat("@ai what files?", granted=CHAT)).decision == "accept"
    await asyncio.wait_for(held.streaming.wait(), 20)

    (app.config / "workspace" / "AGENTS.md").write_text("You are version two.\n")
    (app.config / "providers.yml").write_text(providers_yml(app.provider.port, key="sk-next-1"))
    assert "version 3" in (await app.command("reload"))[0]
    assert client_of(app.runtime) is not old_client
    assert not old_client._http.is_closed  # type: ignore[attr-defined]
    held.release.set()
    await app.turn_done()

    first, second = app.provider.requests[-2:]
    assert first.headers["authorization"] == second.headers["authorization"]
    assert second.headers["authorization"] == "Bearer sk-unit-secret-key"
    assert "version one" in json.dumps(second.json()["messages"][0])
    await asyncio.wait_for(asyncio.gather(*list(app.runtime._closing)), 20)
    assert old_client._http.is_closed  # type: ignore[attr-defined]

    app.provider.answer("New key.")
    await app.chat("@ai again", granted=CHAT)
    await app.turn_done()
    assert app.provider.requests[-1].headers["authorization"] == "Bearer sk-next-1"
    assert "version two" in json.dumps(app.provider.requests[-1].json()["messages"][0])


async def test_an_unchanged_provider_keeps_its_client_and_another_changes_alone(
    app: App,
) -> None:
    before = app.runtime.served
    client = client_of(app.runtime)
    (app.config / "config.yml").write_text(NO_COOLDOWNS + "turn:\n  max_tool_rounds: 2\n")
    await app.command("reload")
    after = app.runtime.served
    assert after is not before and after.plane.version == 2
    assert client_of(app.runtime) is client
    assert after.providers["local"] is before.providers["local"]
    assert app.runtime._retired == []
    assert app.runtime.snapshot(CHAT).limits.max_tool_rounds == 2

    # What the client sends with each request changes: a new client, the old one retired.
    identity = "identity:\n  include_player_name_field: false\n"
    (app.config / "config.yml").write_text(NO_COOLDOWNS + identity)
    await app.command("reload")
    assert client_of(app.runtime) is not client
    assert app.runtime._retired == [client]


async def test_a_provider_without_its_key_is_not_served_and_says_why(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    config = tmp_path / "config"
    write_config(config, provider.port, key="${LOCAL_KEY}")
    runtime = Runtime.open(config, environ={})
    try:
        assert "local" not in runtime.served.providers
        with pytest.raises(NotConfiguredError, match="LOCAL_KEY is not set"):
            runtime.snapshot(())
        assert runtime.served.text("commands.reload_done", {"version": "1"}) is (
            runtime.text("commands.reload_done", {"version": "1"})
        )
    finally:
        await runtime.aclose()


async def test_tools_bound_later_serve_the_same_version_again_with_its_clients(app: App) -> None:
    before = app.runtime.served
    client = client_of(app.runtime)

    async def online(arguments: dict[str, object], context: object) -> object:
        return {"players": []}

    app.runtime.add_tool_handlers({"online_players": online})
    after = app.runtime.served
    assert after is not before and after.plane is before.plane
    assert client_of(app.runtime) is client and app.runtime._retired == []


async def test_the_linked_servers_game_version_is_said_once_after_the_instructions(
    app: App,
) -> None:
    plugin = app.runtime.plugin
    assert plugin is not None and plugin.linked
    first = app.runtime.snapshot(())
    assert first.instructions is not None
    assert first.instructions.endswith(
        "This Minecraft server runs Minecraft 1.21.8 on a test server; its items, recipes and"
        " mechanics are that version's, plus what its datapacks and plugins add."
    )
    # Memoised: every turn of the same plugin starts with the same bytes (prompt caches).
    assert app.runtime.snapshot(()) is first
    newer = hello(features=("game_facts",)).model_copy(
        update={"minecraft_version": "26.1", "data_version": 4786}
    )
    plugin.connected(app.link, newer)
    second = app.runtime.snapshot(())
    assert second.instructions is not None
    assert second.instructions.count("This Minecraft server runs") == 1
    assert "Minecraft 26.1 (data version 4786)" in second.instructions
    assert second.instructions.endswith("rather than recalling them.")
    plugin.connected(app.link, hello(features=("game_facts", "server_knowledge")))
    knowing = app.runtime.snapshot(()).instructions or ""
    assert knowing.endswith(
        "Suggest only commands this server has: list_commands names those the asker may run,"
        " list_plugins what is installed."
    )
    plugin.disconnected()
    unlinked = app.runtime.snapshot(()).instructions or ""
    assert "This Minecraft server runs" not in unlinked
