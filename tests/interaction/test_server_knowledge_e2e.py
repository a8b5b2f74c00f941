"""Server knowledge end to end: the testkit JVM with its command map and plugin list, ``python
-m bridge serve`` and a scripted provider. ``list_commands`` answers from the server's own
command map, filtered by the asker's permissions (a guest and an operator see different
lists), without permission nodes, with the forms the whitelist lets the assistant run; a
command a plugin registers later is listed by the next call; ``list_plugins`` names the
installed plugins; the instructions point the model at the two tools."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .test_turns_e2e import CHAT_ONLY, NO_COOLDOWNS, REPLY_PREFIX, World, system_text, world

pytestmark = pytest.mark.jvm

CONFIG = NO_COOLDOWNS + "environment:\n  tool_cooldown_ms: 0\n"
WHITELIST = (
    'schema: 1\nenabled: true\nplayer:\n  - "go [a-z]{1,16}"\n'
    'console:\n  - "time set (day|night)"\n'
    '  - {rule: "sudo [a-z]{3,16} list", allow_never: true}\n'
)


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]


async def op(w: World, payload: dict[str, Any], done: str) -> None:
    since, ref = w.mark(), f"k{w.mark()}"
    await w.testkit.send({**payload, "ref": ref})
    await w.testkit.wait_event(
        lambda e: e.get("event") == done and e.get("ref") == ref, since=since
    )


async def ask(w: World, player: str, *calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One turn of ``player`` whose model makes ``calls``; the results it read back."""
    w.provider.call_tools(*calls)
    w.provider.answer("Done.")
    since = w.mark()
    await w.chat(player, "@ai what can I do here")
    if any(name == "list_commands" for name, _ in calls):
        # The commands the asker may run are theirs: the answer reaches them alone.
        await w.message(player, "→ you] Done.", since)
    else:
        await w.message("*", REPLY_PREFIX, since)
    results = tool_results(w.provider.bodies()[-1])[-len(calls) :]
    for result in results:
        assert result["ok"] is True, result
    return [result["result"] for result in results]


def names(result: dict[str, Any]) -> list[str]:
    return [command["name"] for command in result["commands"]]


async def test_list_commands_shows_the_askers_commands_from_the_servers_command_map(
    tmp_path: Any,
) -> None:
    async with world(tmp_path, CONFIG, files={"whitelist.yml": WHITELIST}) as w:
        await w.add("Steve", [*CHAT_ONLY, "warps.use"])
        await w.add(
            "Alex",
            [*CHAT_ONLY, "warps.use", "minecraft.command.time", "essentials.sudo"],
        )
        (steve,) = await ask(w, "Steve", ("list_commands", {}))
        first = w.provider.bodies()[0]
        assert {"list_commands", "list_plugins"} <= {t["function"]["name"] for t in first["tools"]}
        assert "list_commands names those the asker may run" in system_text(first)
        # Steve holds warps.use and nothing else: the commands without a node (the
        # commands.yml script is no command of its own) and the warp.
        assert steve["for"] == "Steve"
        assert names(steve) == ["warp"]
        (warp,) = steve["commands"]
        assert warp == {
            "name": "warp",
            "plugin": "Warps",
            "aliases": ["go"],
            "usage": "/warp <name>",
            "description": "Teleports you to a warp.",
            "whitelisted": [{"form": "go [a-z]{1,16}", "runs": "as the asking player"}],
        }

        (alex,) = await ask(w, "Alex", ("list_commands", {}))
        assert names(alex) == ["sudo", "time", "warp"]
        by_name = {command["name"]: command for command in alex["commands"]}
        assert by_name["time"]["whitelisted"] == [
            {"form": "time set (day|night)", "runs": "as the console"}
        ]
        assert by_name["time"]["usage"] == "/time (add|query|set) <time>"
        # On the never list: only the rule that opted out of it reaches sudo.
        assert by_name["sudo"]["whitelisted"] == [
            {"form": "sudo [a-z]{3,16} list", "runs": "as the console"}
        ]
        sent = json.dumps(w.provider.bodies())
        assert "warps.use" not in sent and "essentials.sudo" not in sent

        # A plugin registers a command: the next call reads the map again and lists it.
        await op(
            w,
            {
                "op": "command.register",
                "name": "home",
                "plugin": "Homes",
                "permission": "warps.use",
                "usage": "/<command> [name]",
                "description": "Go home.",
            },
            "command.registered",
        )
        await op(
            w,
            {
                "op": "plugin.add",
                "name": "Homes",
                "version": "3.1",
                "description": "§aHomes\nfor all",
            },
            "plugin.added",
        )
        again, only_homes, plugins = await ask(
            w,
            "Steve",
            ("list_commands", {}),
            ("list_commands", {"plugin": "homes"}),
            ("list_plugins", {}),
        )
        assert names(again) == ["home", "warp"]
        assert only_homes["commands"] == [
            {
                "name": "home",
                "plugin": "Homes",
                "usage": "/home [name]",
                "description": "Go home.",
            }
        ]
        listed = {plugin["name"]: plugin for plugin in plugins["plugins"]}
        assert listed["Homes"] == {
            "name": "Homes",
            "version": "3.1",
            "enabled": True,
            "description": "Homes for all",
        }
        assert {"Essentials", "LuckPerms", "Warps"} <= set(listed)
