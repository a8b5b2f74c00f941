"""Game facts from the running server: ``recipe_lookup`` and ``item_facts``.

The plugin answers from the server's own registries (vanilla, datapacks and plugins alike), so
the model reports the recipes this server has rather than the ones it remembers. The plugin
resolves the name a player used (``beacon``, ``Beacon``, ``minecraft:beacon``) and never
guesses: a near miss comes back as suggestions and no recipes, and the result says so. Nothing
here is about a player, so the tools need no online player and are offered to every tier.
"""

from __future__ import annotations

from typing import Any

from bridge.link.errors import LinkRequestError
from bridge.link.messages import (
    FactsItem,
    FactsItemResult,
    FactsRecipes,
    FactsRecipesResult,
    GameQuery,
    Hello,
    RecipeView,
    WireModel,
)
from bridge.tools.plugin_access import GAME_FACTS, SERVER_KNOWLEDGE, PluginAccess, link_failure
from bridge.tools.registry import CallContext, HandlerFn
from bridge.tools.results import ErrorCode, ToolFailure

RECIPES_DEFAULT = 4
RECIPES_MAX = 16
RECIPES_MAX_CHARS = 6000
"""The compact JSON of the recipes the plugin lists (UTF-8 bytes): about 1,500 tokens."""
QUERY_MAX = 128
VANILLA = "minecraft"

NOT_SURE = (
    "No item is named exactly {query!r} on this server. Do not guess: ask again with one of "
    "did_you_mean, or ask the player which one they meant."
)
UNKNOWN = "This server has no item named like {query!r}."


PLATFORM_NAMES = {"paper": "Paper", "folia": "Folia", "testkit": "a test server"}


def version_line(hello: Hello) -> str:
    """The sentence of the instructions that says which game the server runs: its Minecraft
    version and data version as its plugin announced them (fixed while it stays linked, so the
    instructions, the start of every request, stay the same bytes)."""
    data = "" if hello.data_version is None else f" (data version {hello.data_version})"
    line = (
        f"This Minecraft server runs Minecraft {hello.minecraft_version}{data} on "
        f"{PLATFORM_NAMES[hello.platform]}; its items, recipes and mechanics are that version's"
        ", plus what its datapacks and plugins add."
    )
    if GAME_FACTS in hello.features:
        line += " Look recipes and items up with the game-fact tools rather than recalling them."
    if SERVER_KNOWLEDGE in hello.features:
        line += (
            " Suggest only commands this server has: list_commands names those the asker may"
            " run, list_plugins what is installed."
        )
    return line


class GameFactsTools:
    """The two handlers, bound to one ``PluginAccess``."""

    def __init__(self, plugin: PluginAccess) -> None:
        self._plugin = plugin

    def handlers(self) -> dict[str, HandlerFn]:
        """For ``registry_for(plane, extra_handlers=...)``."""
        return {"recipe_lookup": self.recipe_lookup, "item_facts": self.item_facts}

    async def recipe_lookup(self, arguments: dict[str, Any], context: CallContext) -> Any:
        _only(arguments, ("item", "limit", "uses"))
        query = _query(arguments)
        limit = arguments.get("limit", RECIPES_DEFAULT)
        if type(limit) is not int or not 1 <= limit <= RECIPES_MAX:
            raise ToolFailure(
                ErrorCode.INVALID_ARGUMENTS, f"limit must be an integer 1-{RECIPES_MAX}"
            )
        uses = arguments.get("uses", False)
        if type(uses) is not bool:
            raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, "uses must be true or false")
        request = FactsRecipes(
            item=query,
            direction="uses" if uses else "makes",
            limit=limit,
            max_chars=RECIPES_MAX_CHARS,
        )
        answer = await self._ask("facts.recipes", request)
        assert isinstance(answer, FactsRecipesResult)
        unsure = _unsure(answer.query, query)
        if unsure is not None:
            return unsure
        result: dict[str, Any] = {
            "item": answer.query.item,
            "looked_up": "recipes using it" if uses else "recipes making it",
            "recipes": [_recipe(recipe) for recipe in answer.recipes[:limit]],
            "total": answer.total,
            "truncated": answer.truncated or len(answer.recipes) > limit,
        }
        if not answer.recipes:
            result["note"] = (
                "The server has no recipe using this item."
                if uses
                else "The server has no recipe making this item (it is found, traded or dropped)."
            )
        return result

    async def item_facts(self, arguments: dict[str, Any], context: CallContext) -> Any:
        _only(arguments, ("item",))
        query = _query(arguments)
        answer = await self._ask("facts.item", FactsItem(item=query))
        assert isinstance(answer, FactsItemResult)
        unsure = _unsure(answer.query, query)
        if unsure is not None:
            return unsure
        assert answer.facts is not None  # the wire model requires it on an exact match
        return answer.facts.model_dump(mode="json")

    async def _ask(self, name: str, request: WireModel) -> WireModel:
        link = self._plugin.link(GAME_FACTS)
        try:
            return await link.request(name, request)
        except LinkRequestError as exc:
            raise link_failure(exc, name) from exc


def _only(arguments: dict[str, Any], known: tuple[str, ...]) -> None:
    extra = sorted(set(arguments) - set(known))
    if extra:
        raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, f"unknown argument {extra[0]!r}")


def _query(arguments: dict[str, Any]) -> str:
    item = arguments.get("item")
    if not isinstance(item, str) or not item.strip() or len(item) > QUERY_MAX:
        raise ToolFailure(
            ErrorCode.INVALID_ARGUMENTS,
            f"item must be an item name or key, 1-{QUERY_MAX} characters",
        )
    return item


def _unsure(query: GameQuery, asked: str) -> dict[str, Any] | None:
    """The result of a name the plugin could not tie to one item, or None when it could."""
    if query.match == "exact":
        return None
    if query.match == "near":
        return {
            "found": False,
            "did_you_mean": list(query.suggestions),
            "note": NOT_SURE.format(query=asked),
        }
    return {"found": False, "did_you_mean": [], "note": UNKNOWN.format(query=asked)}


def _recipe(recipe: RecipeView) -> dict[str, Any]:
    """One recipe as the model reads it: whose it is, the grid or inputs, what it makes."""
    namespace = recipe.key.split(":", 1)[0]
    shown: dict[str, Any] = {
        "key": recipe.key,
        "from": "vanilla" if namespace == VANILLA else f"{namespace} (a plugin or datapack)",
        "kind": recipe.kind,
        "result": None if recipe.result is None else recipe.result.model_dump(mode="json"),
    }
    if recipe.pattern is not None:
        shown["pattern"] = list(recipe.pattern)
    inputs: dict[str, Any] = {}
    for ingredient in recipe.ingredients:
        options: list[str] = list(ingredient.options)
        if ingredient.more:
            options.append(f"... {ingredient.more} more")
        inputs[ingredient.slot] = options
    shown["ingredients"] = inputs
    if recipe.cook_ticks is not None:
        shown["cook_seconds"] = round(recipe.cook_ticks / 20, 2)
        shown["experience"] = recipe.experience
    return shown
