"""``recipe_lookup`` and ``item_facts`` against a scripted link: what is asked of the plugin,
how its answer reaches the model, and the refusals (bad arguments, a plugin without the
feature, a plugin that fails)."""

from __future__ import annotations

from typing import Any

import pytest

from bridge.link.codes import ErrorCode as LinkCode
from bridge.link.errors import LinkRequestError
from bridge.link.messages import (
    FactsItem,
    FactsItemResult,
    FactsRecipes,
    FactsRecipesResult,
    WireModel,
)
from bridge.tools.game_facts import RECIPES_MAX_CHARS, GameFactsTools
from bridge.tools.results import ErrorCode, ToolFailure

from .plugin_fakes import FakeLink, access, context

EXACT = {"match": "exact", "item": "minecraft:beacon", "suggestions": []}
NEAR = {"match": "near", "item": None, "suggestions": ["minecraft:beacon", "minecraft:bacon"]}
BEACON = {
    "key": "minecraft:beacon",
    "kind": "shaped",
    "result": {"item": "minecraft:beacon", "count": 1},
    "pattern": ["AAA", "ABA", "CCC"],
    "ingredients": [
        {"slot": "A", "options": ["minecraft:glass"], "more": 0},
        {"slot": "B", "options": ["minecraft:nether_star"], "more": 0},
        {"slot": "C", "options": ["#minecraft:obsidians", "minecraft:crying_obsidian"], "more": 3},
    ],
    "cook_ticks": None,
    "experience": None,
}
SMELTED = {
    "key": "furnaces:glass_from_sand",
    "kind": "smelting",
    "result": {"item": "minecraft:glass", "count": 1},
    "pattern": None,
    "ingredients": [{"slot": "input", "options": ["#minecraft:smelts_to_glass"], "more": 0}],
    "cook_ticks": 200,
    "experience": 0.1,
}
FACTS = {
    "key": "minecraft:beacon",
    "max_stack": 64,
    "durability": 0,
    "edible": False,
    "fuel": False,
    "block": True,
    "rarity": "rare",
    "tags": [],
    "more_tags": 0,
    "recipes_making": 1,
    "recipes_using": 0,
}


def _recipes(query: dict[str, Any], *recipes: dict[str, Any], total: int | None = None) -> Any:
    def answer(data: WireModel) -> WireModel:
        assert isinstance(data, FactsRecipes)
        return FactsRecipesResult.model_validate(
            {
                "query": query,
                "recipes": list(recipes),
                "total": len(recipes) if total is None else total,
                "truncated": total is not None and total > len(recipes),
            }
        )

    return answer


def _tools(link: FakeLink, features: tuple[str, ...] = ("game_facts",)) -> GameFactsTools:
    return GameFactsTools(access(link, features))


async def test_a_lookup_asks_the_plugin_and_shows_whose_recipe_it_is() -> None:
    link = FakeLink({"facts.recipes": _recipes(EXACT, BEACON, SMELTED, total=5)})
    result = await _tools(link).recipe_lookup({"item": "Beacon", "limit": 2}, context())
    (asked,) = link.of("facts.recipes")
    assert asked == FactsRecipes(
        item="Beacon", direction="makes", limit=2, max_chars=RECIPES_MAX_CHARS
    )
    assert result["item"] == "minecraft:beacon"
    assert result["total"] == 5 and result["truncated"] is True
    beacon, smelted = result["recipes"]
    assert beacon["from"] == "vanilla"
    assert beacon["ingredients"]["C"] == [
        "#minecraft:obsidians",
        "minecraft:crying_obsidian",
        "... 3 more",
    ]
    assert smelted["from"] == "furnaces (a plugin or datapack)"
    assert smelted["cook_seconds"] == 10.0 and smelted["experience"] == 0.1
    assert "pattern" not in smelted


async def test_uses_asks_for_the_recipes_that_take_the_item() -> None:
    link = FakeLink({"facts.recipes": _recipes(EXACT)})
    result = await _tools(link).recipe_lookup({"item": "beacon", "uses": True}, context())
    assert link.of("facts.recipes")[0].direction == "uses"
    assert result["recipes"] == [] and "no recipe using" in result["note"]


@pytest.mark.parametrize("handler", ["recipe_lookup", "item_facts"])
async def test_a_near_miss_is_reported_as_suggestions_never_as_an_item(handler: str) -> None:
    link = FakeLink(
        {
            "facts.recipes": _recipes(NEAR),
            "facts.item": lambda _: FactsItemResult.model_validate({"query": NEAR, "facts": None}),
        }
    )
    result = await _tools(link).handlers()[handler]({"item": "beakon"}, context())
    assert result == {
        "found": False,
        "did_you_mean": ["minecraft:beacon", "minecraft:bacon"],
        "note": result["note"],
    }
    assert "Do not guess" in result["note"] and "'beakon'" in result["note"]


async def test_item_facts_returns_what_the_server_says() -> None:
    link = FakeLink(
        {"facts.item": lambda _: FactsItemResult.model_validate({"query": EXACT, "facts": FACTS})}
    )
    result = await _tools(link).item_facts({"item": "minecraft:beacon"}, context())
    assert link.of("facts.item") == [FactsItem(item="minecraft:beacon")]
    assert result == FACTS


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"item": ""},
        {"item": "   "},
        {"item": 5},
        {"item": "x" * 129},
        {"item": "beacon", "limit": 0},
        {"item": "beacon", "limit": 17},
        {"item": "beacon", "limit": True},
        {"item": "beacon", "uses": "yes"},
        {"item": "beacon", "player": "Alex"},
    ],
)
async def test_bad_arguments_are_refused_before_the_plugin_is_asked(
    arguments: dict[str, Any],
) -> None:
    link = FakeLink({"facts.recipes": _recipes(EXACT)})
    with pytest.raises(ToolFailure) as refused:
        await _tools(link).recipe_lookup(arguments, context())
    assert refused.value.code is ErrorCode.INVALID_ARGUMENTS
    assert link.sent == []


async def test_a_plugin_without_the_feature_is_not_asked() -> None:
    link = FakeLink({"facts.recipes": _recipes(EXACT)})
    with pytest.raises(ToolFailure) as refused:
        await _tools(link, features=("snapshots",)).recipe_lookup({"item": "beacon"}, context())
    assert refused.value.code is ErrorCode.UNAVAILABLE
    assert link.sent == []


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (LinkCode.TIMEOUT, ErrorCode.TIMEOUT),
        (LinkCode.UNAVAILABLE, ErrorCode.UNAVAILABLE),
        (LinkCode.DISCONNECTED, ErrorCode.UNAVAILABLE),
        (LinkCode.INTERNAL, ErrorCode.INTERNAL_ERROR),
    ],
)
async def test_a_plugin_failure_is_normalised(code: LinkCode, expected: ErrorCode) -> None:
    def fail(_: WireModel) -> WireModel:
        raise LinkRequestError(code, "registry frozen at com.example.Internal")

    link = FakeLink({"facts.item": fail})
    with pytest.raises(ToolFailure) as failed:
        await _tools(link).item_facts({"item": "beacon"}, context())
    assert failed.value.code is expected
    assert "com.example" not in str(failed.value)
