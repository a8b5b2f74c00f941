"""Personas (the application in process, the provider real HTTP over loopback): the public
session speaks as ``persona.public``, every private conversation as ``persona.private``; the
persona comes last in the instructions, the same bytes every turn of the lane; the tools
offered are the same as without a persona; a reload changes the persona of later turns."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bridge.turns.ports import PlayerRef as TurnPlayer

from .conftest import ALEX, EVERY_NODE, STEVE, WAIT, App, open_app, rendered, write_config
from .scripted_provider import ScriptedProvider

PIRATE = "---\nname: pirate\ndescription: A pirate.\n---\nYou are a pirate. Say arr.\n"
KNIGHT = "---\nname: knight\ndescription: A knight.\n---\nYou are a courteous knight.\n"
COOLDOWNS = "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"


def system_text(body: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in body["messages"] if m["role"] in ("system", "developer"))


def tool_names(body: dict[str, Any]) -> list[str]:
    return sorted(tool["function"]["name"] for tool in body.get("tools", []))


async def opened(tmp_path: Path, provider: ScriptedProvider, persona: str) -> App:
    config = tmp_path / "config"
    write_config(config, provider.port, COOLDOWNS + persona)
    souls = config / "workspace" / "souls"
    souls.mkdir(parents=True)
    (souls / "pirate.md").write_text(PIRATE)
    (souls / "knight.md").write_text(KNIGHT)
    return await open_app(config, provider)


async def answered(app: App, text: str) -> None:
    await app.link.wait_for(
        lambda name, data: name == "output.chat" and text in rendered(data.text)
    )


async def test_each_lane_type_speaks_as_its_persona_and_keeps_its_tools(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider, "persona:\n  public: pirate\n  private: knight\n")
    try:
        for n in range(2):
            provider.answer(f"Arr {n}.")
            assert (await app.chat(f"@ai hello {n}")).decision == "accept"
            await app.turn_done()
            await answered(app, f"Arr {n}.")
        provider.answer("Good day.")
        await app.command("ai", "hello", player=ALEX)
        await answered(app, "Good day.")
        first, second, private = provider.bodies()
        public_system = system_text(first)
        persona = "\n\n## Persona\n\nYou are a pirate. Say arr."
        assert persona in public_system
        assert public_system.count("## Persona") == 1
        assert system_text(second) == public_system  # the same bytes every turn of the lane
        assert "\n\n## Persona\n\nYou are a courteous knight." in system_text(private)
        assert "pirate" not in system_text(private)
        # Everything before the persona is what a lane without one sends (the instructions
        # the turn fixed); only the bridge's closing line about languages comes after it.
        unset = app.runtime.snapshot(EVERY_NODE).instructions or ""
        assert public_system.startswith(unset + persona)
        # Text only: the same tools as the same player's turn without a persona.
        snapshot_tools = sorted(spec.name for spec in app.runtime.snapshot(EVERY_NODE).tools)
        assert tool_names(first) == snapshot_tools

        # A reload takes effect for later turns.
        config = app.config / "config.yml"
        config.write_text(config.read_text().replace("public: pirate", "public: null"))
        assert any("reloaded" in line for line in await app.command("reload"))
        provider.answer("Plain.")
        assert (await app.chat("@ai hello again")).decision == "accept"
        await app.turn_done()
        assert "## Persona" not in system_text(provider.bodies()[-1])
        lane = app.runtime.lanes.lanes.find_private(ALEX.uuid)
        assert lane is not None and lane.task is not None
        await asyncio.wait_for(asyncio.shield(lane.task), WAIT)
    finally:
        await app.runtime.aclose()


async def test_a_player_with_the_node_chooses_the_persona_of_their_private_conversations(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider, "persona:\n  public: null\n  private: knight\n")
    chooser = [*EVERY_NODE, "mineclaw.persona"]
    try:
        refused = await app.command("ai", "persona", "pirate", player=ALEX)
        assert refused == ["<red>You may not use /mineclaw ai persona."]
        listing = await app.command("ai", "persona", player=ALEX, granted=chooser)
        assert listing == [
            "<gray>Your private conversations speak as: knight. Choose one with /ai persona"
            " and its name:",
            "<gray>  knight - A knight.",
            "<gray>  pirate - A pirate.",
        ]
        unknown = await app.command("ai", "persona", "robot", player=ALEX, granted=chooser)
        assert unknown == ["<red>No persona is named robot; /ai persona lists them."]
        chosen = await app.command("ai", "persona", "Pirate", player=ALEX, granted=chooser)
        assert chosen == ["<green>Your private conversations now speak as: pirate."]
        provider.answer("Arr, private.")
        await app.command("ai", "hello", player=ALEX)
        await answered(app, "Arr, private.")
        assert "You are a pirate. Say arr." in system_text(provider.bodies()[-1])
        # A longer line starting with the word is a question, not the command.
        provider.answer("It means a character.")
        await app.command("ai", "persona", "means", "what?", player=ALEX, granted=chooser)
        await answered(app, "It means a character.")
        # Others and the public session keep their defaults.
        provider.answer("Public.")
        assert (await app.chat("@ai hi", player=STEVE)).decision == "accept"
        await app.turn_done()
        assert "## Persona" not in system_text(provider.bodies()[-1])
        steve = app.runtime.persona_soul(TurnPlayer(STEVE.uuid, STEVE.name))
        assert steve is not None and steve.name == "knight"
        app.runtime.audit.flush()
        assert [e.fields["persona"] for e in app.runtime.audit.events("persona.chosen")] == [
            "pirate"
        ]
    finally:
        await app.runtime.aclose()
    # The choice is remembered across a restart; default goes back to persona.private.
    again = await open_app(app.config, provider)
    try:
        alex = TurnPlayer(ALEX.uuid, ALEX.name)
        remembered = again.runtime.persona_soul(alex)
        assert remembered is not None and remembered.name == "pirate"
        back = await again.command("ai", "persona", "default", player=ALEX, granted=chooser)
        assert back == ["<green>Your private conversations now speak as: knight."]
    finally:
        await again.runtime.aclose()
