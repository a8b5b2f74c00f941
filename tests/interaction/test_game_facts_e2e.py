"""Game facts end to end: the testkit JVM with its recipe registry, ``python -m bridge serve``
and a scripted provider. "How do I craft a beacon" reaches the model, which calls
``recipe_lookup``; the tool result it reads back is the recipe the server registered (vanilla's
and a plugin's), a near miss comes back as a suggestion and never as a recipe, and a recipe a
plugin adds later is seen by the next lookup. The server's version and data version are stated
once in the instructions, the same bytes in every request."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .test_turns_e2e import (
    CHAT_ONLY,
    NO_COOLDOWNS,
    REPLY_PREFIX,
    World,
    asked_by,
    system_text,
    world,
)

pytestmark = pytest.mark.jvm

# The second turn looks up again at once: no tool cooldown between the turns.
CONFIG = NO_COOLDOWNS + "environment:\n  tool_cooldown_ms: 0\n"

STAR_BEACON = {
    "op": "recipe.add",
    "key": "myplugin:star_beacon",
    "kind": "shapeless",
    "result": "minecraft:beacon",
    "count": 2,
    "ingredients": [{"items": ["minecraft:nether_star"]}, {"items": ["minecraft:glass"]}],
}


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]


async def add_recipe(w: World, recipe: dict[str, Any]) -> None:
    since, ref = w.mark(), f"r{w.mark()}"
    await w.testkit.send({**recipe, "ref": ref})
    await w.testkit.wait_event(
        lambda e: e.get("event") == "recipe.added" and e.get("ref") == ref, since=since
    )


async def test_how_do_i_craft_a_beacon_is_answered_from_the_servers_own_recipes(
    tmp_path: Any,
) -> None:
    async with world(tmp_path, CONFIG) as w:
        await w.add("Steve", CHAT_ONLY)  # no tool permission: the game facts are for everyone
        w.provider.call_tools(
            ("recipe_lookup", {"item": "beacon"}),
            ("recipe_lookup", {"item": "beakon"}),
            ("item_facts", {"item": "Beacon"}),
        )
        w.provider.answer("Glass, a nether star and obsidian.")
        since = w.mark()
        await w.chat("Steve", "@ai how do I craft a beacon")
        assert (
            await w.message("*", REPLY_PREFIX, since)
            == asked_by("Steve") + "Glass, a nether star and obsidian."
        )
        first, second = w.provider.bodies()
        offered = [tool["function"]["name"] for tool in first["tools"]]
        assert {"recipe_lookup", "item_facts"} <= set(offered)
        instructions = system_text(first)
        assert instructions.count("Minecraft 1.21.8 (data version 4440)") == 1
        assert system_text(second) == instructions
        beacon, near, facts = tool_results(second)
        assert beacon["ok"] is True, beacon
        assert beacon["result"]["item"] == "minecraft:beacon"
        assert beacon["result"]["recipes"] == [
            {
                "key": "minecraft:beacon",
                "from": "vanilla",
                "kind": "shaped",
                "result": {"item": "minecraft:beacon", "count": 1},
                "pattern": ["AAA", "ABA", "CCC"],
                "ingredients": {
                    "A": ["minecraft:glass"],
                    "B": ["minecraft:nether_star"],
                    "C": ["minecraft:obsidian"],
                },
            }
        ]
        assert near["result"]["found"] is False
        assert near["result"]["did_you_mean"] == ["minecraft:beacon"]
        assert "recipes" not in near["result"]
        assert facts["result"]["key"] == "minecraft:beacon"
        assert facts["result"]["rarity"] == "rare"
        assert facts["result"]["recipes_making"] == 1

        # A plugin registers a recipe: the next lookup reads the registry again and shows it.
        await add_recipe(w, STAR_BEACON)
        w.provider.call_tools(("recipe_lookup", {"item": "minecraft:beacon", "limit": 4}))
        w.provider.answer("Two ways now.")
        since = w.mark()
        await w.chat("Steve", "@ai and now?")
        await w.message("*", "Two ways now.", since)
        (again,) = tool_results(w.provider.bodies()[-1])[-1:]
        assert again["ok"] is True, again
        recipes = again["result"]["recipes"]
        assert [recipe["key"] for recipe in recipes] == [
            "minecraft:beacon",
            "myplugin:star_beacon",
        ]
        assert recipes[1]["from"] == "myplugin (a plugin or datapack)"
        assert recipes[1]["result"] == {"item": "minecraft:beacon", "count": 2}
        assert recipes[1]["ingredients"] == {
            "1": ["minecraft:nether_star"],
            "2": ["minecraft:glass"],
        }
