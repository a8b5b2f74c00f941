"""``whitelist.yml``: the command patterns the model may run without asking anyone.

Each list holds RE2 patterns matched against the whole canonical command (see
``bridge.policy.whitelist``). A duplicate or a pattern RE2 cannot compile fails the load.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator

from bridge.control.base import StrictModel
from bridge.policy.whitelist import (
    MAX_RULES_PER_LIST,
    InvalidRule,
    Whitelist,
    check_rule,
)


def _valid_rule(pattern: str) -> str:
    try:
        check_rule(pattern)
    except InvalidRule as exc:
        raise ValueError(str(exc)) from None
    return pattern


# Checked per item so an error names the exact rule (and its line).
Rule = Annotated[str, AfterValidator(_valid_rule)]


class WhitelistFile(StrictModel):
    """The whole of ``whitelist.yml``."""

    schema_: Literal[1] = Field(alias="schema")
    enabled: bool = True
    player: list[Rule] = Field(default_factory=list, max_length=MAX_RULES_PER_LIST)
    console: list[Rule] = Field(default_factory=list, max_length=MAX_RULES_PER_LIST)

    @field_validator("player", "console")
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

    def compile(self) -> Whitelist:
        return Whitelist(enabled=self.enabled, player=self.player, console=self.console)
