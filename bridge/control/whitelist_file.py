"""``whitelist.yml``: the command patterns the model may run without asking anyone.

``player`` and ``console`` hold RE2 patterns matched against the whole canonical command
(checked by ``bridge.control.whitelist_rules``; ``bridge.policy.whitelist`` compiles them,
for the served configuration the app builds per version). A
duplicate or a pattern RE2 cannot compile fails the load.
``never`` holds command roots that a command confirmed by another player may not start with,
in any namespace; it has a default list, and ``never: []`` switches it off.
``console_confirm`` holds RE2 patterns, like ``console``, for console commands that run only
after a second player (holding ``mineclaw.approve.console``, not the requester) confirms the
exact command: the two-person rule. A command matching one runs only that way, even if a
``console`` rule matches it too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator

from bridge.control.base import StrictModel
from bridge.control.whitelist_rules import (
    DEFAULT_NEVER,
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


class WhitelistFile(StrictModel):
    """The whole of ``whitelist.yml``."""

    schema_: Literal[1] = Field(alias="schema")
    enabled: bool = True
    player: list[Rule] = Field(default_factory=list, max_length=MAX_RULES_PER_LIST)
    console: list[Rule] = Field(default_factory=list, max_length=MAX_RULES_PER_LIST)
    # Console commands a second player must confirm (the two-person rule).
    console_confirm: list[Rule] = Field(default_factory=list, max_length=MAX_RULES_PER_LIST)
    # Roots no confirmation by another player can pass; namespaced forms are covered.
    never: list[NeverRoot] = Field(
        default_factory=lambda: list(DEFAULT_NEVER), max_length=MAX_NEVER
    )

    @field_validator("player", "console", "console_confirm", "never")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        first_seen: dict[str, int] = {}
        for index, pattern in enumerate(value):
            if pattern in first_seen:
                raise ValueError(
                    f"rule [{index}] repeats rule [{first_seen[pattern]}] ({pattern!r})"
                )
            first_seen[pattern] = index
        return value
