"""Personas end to end: the testkit JVM, ``python -m bridge serve`` with two souls in
``workspace/souls/`` and a scripted provider. The public session speaks as ``persona.public``;
the plugin reports ``mineclaw.persona`` (named by the bridge in ``link.state``), so a player
holding it chooses the persona of their private conversations with ``/ai persona <name>``,
and a player without it is refused; the tools offered stay the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_budgets_e2e import tool_names
from .test_turns_e2e import NO_COOLDOWNS, asked_by, system_text, world

pytestmark = pytest.mark.jvm

CHAT = ["mineclaw.command.chat", "mineclaw.command.private"]
SOULS = {
    "workspace/souls/pirate.md": "---\nname: pirate\ndescription: A pirate.\n---\nSay arr.\n",
    "workspace/souls/knight.md": "---\nname: knight\ndescription: A knight.\n---\nBe courteous.\n",
}
CONFIG = NO_COOLDOWNS + "persona:\n  public: pirate\n  private: null\n"


async def test_the_public_persona_and_a_players_own_private_choice(tmp_path: Path) -> None:
    async with world(tmp_path, CONFIG, SOULS) as w:
        await w.testkit.wait_event(lambda e: e.get("event") == "link.state")
        await w.add("Steve", [*CHAT, "mineclaw.persona"])
        await w.add("Alex", CHAT)
        w.provider.answer("Arr, hello.")
        since = w.mark()
        await w.chat("Steve", "@ai hello")
        await w.message("*", asked_by("Steve") + "Arr, hello.", since)
        public = w.provider.bodies()[-1]
        assert "## Persona\n\nSay arr." in system_text(public)

        assert await w.command("Alex", "ai", "persona knight") == [
            "You may not use /mineclaw ai persona."
        ]
        assert await w.command("Steve", "ai", "persona knight") == [
            "Your private conversations now speak as: knight."
        ]
        w.provider.answer("Good day, sir.")
        since = w.mark()
        await w.command("Steve", "ai", "hello")
        await w.message("Steve", "Good day, sir.", since)
        private = w.provider.bodies()[-1]
        assert "## Persona\n\nBe courteous." in system_text(private)
        assert "Say arr." not in system_text(private)
        assert sorted(tool_names(private)) == sorted(tool_names(public))
