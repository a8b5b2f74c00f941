"""The never list by category: the built-in data (``never_defaults.yml``) and the owner's additions.

A category names commands, ``<command> <first argument>`` pairs, plugins, permission nodes and
block/item/entity ids; ``bridge.policy.never_list`` decides commands with them. The owner adds
to the built-in set in ``whitelist.yml`` (``never`` for bare command names, ``never_categories``
for whole categories, merged into a built-in one of the same name); nothing built in can be
removed: a rule that needs a never-listed command says ``allow_never: true``.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Annotated, Literal

import yaml
from pydantic import AfterValidator, Field

from bridge.control.base import StrictModel

MAX_ENTRIES = 512
_NAME = r"[a-z0-9_.+-]{1,64}"

CommandName = Annotated[str, Field(pattern=rf"^{_NAME}$")]
Subcommand = Annotated[str, Field(pattern=rf"^{_NAME} [a-z0-9_.+-]{{1,64}}$")]
PluginName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.+-]{1,64}$")]
Node = Annotated[str, Field(pattern=r"^[a-z0-9_-]+(\.[a-z0-9_-]+)*(\.\*)?$", max_length=128)]
ItemId = Annotated[str, Field(pattern=r"^[a-z0-9_./-]{1,64}$")]


def _lower(value: list[str]) -> list[str]:
    return [item.lower() for item in value]


class NeverCategory(StrictModel):
    """One category; every list is optional, and an entry anywhere makes a command never."""

    description: Annotated[str, Field(min_length=1, max_length=200)] = "added by the owner"
    commands: Annotated[list[CommandName], Field(max_length=MAX_ENTRIES)] = []
    subcommands: Annotated[list[Subcommand], Field(max_length=MAX_ENTRIES)] = []
    plugins: Annotated[list[PluginName], Field(max_length=MAX_ENTRIES), AfterValidator(_lower)] = []
    permissions: Annotated[list[Node], Field(max_length=MAX_ENTRIES)] = []
    items: Annotated[list[ItemId], Field(max_length=MAX_ENTRIES)] = []

    def merged(self, other: NeverCategory) -> NeverCategory:
        """This category with ``other``'s entries added (its own description kept)."""

        def union(mine: list[str], theirs: list[str]) -> list[str]:
            return list(dict.fromkeys([*mine, *theirs]))

        return NeverCategory(
            description=self.description,
            commands=union(self.commands, other.commands),
            subcommands=union(self.subcommands, other.subcommands),
            plugins=union(self.plugins, other.plugins),
            permissions=union(self.permissions, other.permissions),
            items=union(self.items, other.items),
        )


CategoryName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,31}$")]


class NeverDefaults(StrictModel):
    schema_: Literal[1] = Field(alias="schema")
    categories: dict[CategoryName, NeverCategory]


@cache
def default_categories() -> dict[str, NeverCategory]:
    """The built-in categories (``bridge/control/never_defaults.yml``)."""
    text = resources.files("bridge.control").joinpath("never_defaults.yml").read_text("utf-8")
    return dict(NeverDefaults.model_validate(yaml.safe_load(text)).categories)


OWNER_CATEGORY = "owner"
"""The category of the bare names listed under ``whitelist.yml``'s ``never``."""


def effective_categories(
    names: list[str], categories: dict[str, NeverCategory]
) -> dict[str, NeverCategory]:
    """The built-in categories with the owner's ``never_categories`` merged in and the owner's
    ``never`` names as the category ``owner``."""
    result = dict(default_categories())
    for name, category in categories.items():
        result[name] = result[name].merged(category) if name in result else category
    if names:
        extra = NeverCategory(description="listed under never in whitelist.yml", commands=names)
        current = result.get(OWNER_CATEGORY)
        result[OWNER_CATEGORY] = current.merged(extra) if current else extra
    return result
