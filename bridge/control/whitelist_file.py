"""``whitelist.yml``: the command patterns the model may run without asking anyone.

``player`` and ``console`` hold RE2 patterns matched against the whole canonical command
(checked by ``bridge.control.whitelist_rules``; ``bridge.policy.whitelist`` compiles them,
for the served configuration the app builds per version). A
duplicate or a pattern RE2 cannot compile fails the load.
``never`` adds command names to the built-in never list (``never_defaults.yml``, by category)
and ``never_categories`` adds whole categories (merged into a built-in one of the same name);
nothing built in can be switched off. A rule may be a mapping ``{rule: <pattern>,
allow_never: true}``: only such a rule reaches a never-listed command, and ``validate`` warns
about it every time (``bridge.control.never_rules``).
``console_confirm`` holds RE2 patterns, like ``console``, for console commands that run only
after a second player (holding ``mineclaw.approve.console``, not the requester) confirms the
exact command: the two-person rule. A command matching one runs only that way, even if a
``console`` rule matches it too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, PlainValidator, ValidationError, field_validator

from bridge.control.base import StrictModel
from bridge.control.never_categories import CategoryName, NeverCategory
from bridge.control.whitelist_rules import (
    MAX_NEVER,
    MAX_RULES_PER_LIST,
    InvalidRule,
    check_never_root,
    check_rule,
)


def _item(check: Callable[[str], None]) -> AfterValidator:
    """A pydantic validator running ``check``, whose `InvalidRule` becomes the field's error."""

    def validate(value: str) -> str:
        try:
            check(value)
        except InvalidRule as exc:
            raise ValueError(str(exc)) from None
        return value

    return AfterValidator(validate)


# Checked per item so an error names the exact rule (and its line).
Rule = Annotated[str, _item(check_rule)]
NeverRoot = Annotated[str, _item(check_never_root)]


class RuleSpec(StrictModel):
    """A rule written as a mapping: ``allow_never: true`` is the owner's explicit opt-out
    that lets this one rule reach a never-listed command."""

    rule: Rule
    allow_never: bool = False


def _rule_entry(value: object) -> str | RuleSpec:
    """A rule as text or as a mapping; an error names only the problem, so the owner sees it
    at the rule's own line and index."""
    if isinstance(value, str):
        try:
            check_rule(value)
        except InvalidRule as exc:
            raise ValueError(str(exc)) from None
        return value
    if isinstance(value, dict):
        try:
            return RuleSpec.model_validate(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            message = str(first["msg"]).removeprefix("Value error, ")
            raise ValueError(f"{where}: {message}" if where else message) from None
    raise ValueError("a rule is a pattern in quotes, or a mapping {rule: ..., allow_never: true}")


RuleEntry = Annotated[str | RuleSpec, PlainValidator(_rule_entry)]


def pattern_of(entry: str | RuleSpec) -> str:
    return entry if isinstance(entry, str) else entry.rule


def allows_never(entry: str | RuleSpec) -> bool:
    return isinstance(entry, RuleSpec) and entry.allow_never


class WhitelistFile(StrictModel):
    """The whole of ``whitelist.yml``."""

    schema_: Literal[1] = Field(alias="schema")
    enabled: bool = True
    player: list[RuleEntry] = Field(default_factory=list, max_length=MAX_RULES_PER_LIST)
    console: list[RuleEntry] = Field(default_factory=list, max_length=MAX_RULES_PER_LIST)
    # Console commands a second player must confirm (the two-person rule).
    console_confirm: list[RuleEntry] = Field(default_factory=list, max_length=MAX_RULES_PER_LIST)
    # Command names added to the built-in never list; namespaced forms are covered.
    never: list[NeverRoot] = Field(default_factory=list, max_length=MAX_NEVER)
    # Categories added to (or merged into) the built-in ones.
    never_categories: dict[CategoryName, NeverCategory] = Field(default_factory=dict, max_length=64)

    @field_validator("player", "console", "console_confirm", "never")
    @classmethod
    def _unique(cls, value: list[str | RuleSpec]) -> list[str | RuleSpec]:
        first_seen: dict[str, int] = {}
        for index, entry in enumerate(value):
            pattern = pattern_of(entry)
            if pattern in first_seen:
                raise ValueError(
                    f"rule [{index}] repeats rule [{first_seen[pattern]}] ({pattern!r})"
                )
            first_seen[pattern] = index
        return value
