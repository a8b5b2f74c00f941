"""The ``budgets`` section of ``config.yml``: token budgets by tier, what guests may do, and
where a day and a month begin.

A tier is a name the owner chooses; a player holding ``mineclaw.budget.<tier>`` is in it. A
player holding none of the configured tiers is a guest. Limits are tokens as the provider
reported them (input plus output), counted per player and for the whole server; no value means
no limit. The decisions themselves are made in ``bridge.policy.budgets``.
"""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator

from bridge.control.base import StrictModel

TIER_NAME = re.compile(r"[a-z0-9_-]{1,32}")
TIER_NODE_PREFIX = "mineclaw.budget."
MAX_TIERS = 16
MAX_TOKENS = 10**12


class TokenLimits(StrictModel):
    """Tokens one holder may use per calendar day and per calendar month (none: no limit)."""

    day_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    month_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)


class GuestConfig(TokenLimits):
    """A player holding no configured tier: smaller limits and fewer, cheaper tools."""

    day_tokens: int | None = Field(default=20_000, ge=1, le=MAX_TOKENS)
    month_tokens: int | None = Field(default=200_000, ge=1, le=MAX_TOKENS)
    max_output_tokens: int = Field(default=400, ge=16, le=10_000_000)
    max_tool_rounds: int = Field(default=2, ge=1, le=64)
    allow_tools: list[str] = Field(default_factory=list, max_length=128)
    """Tools guests may use although ``tools.yml`` marks them ``cost: paid`` or they have
    side effects (``run_command``, ``call_function``)."""

    @field_validator("allow_tools")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not re.fullmatch(r"[a-z][a-z0-9_]{0,63}", name):
                raise ValueError(f"{name!r} is not a tool name")
        return value


class BudgetsConfig(StrictModel):
    """Token budgets. Off by default: usage is counted either way, and ``/mineclaw usage``
    shows it, but nothing is refused and nobody is a guest until ``enabled`` is true."""

    enabled: bool = False
    timezone: str = Field(default="UTC", min_length=1, max_length=64)
    server: TokenLimits = Field(default_factory=TokenLimits)
    guest: GuestConfig = Field(default_factory=GuestConfig)
    tiers: dict[str, TokenLimits] = Field(default_factory=dict, max_length=MAX_TIERS)

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"{value!r} is not a time zone name (for example UTC or Europe/Berlin)"
            ) from None
        return value

    @field_validator("tiers")
    @classmethod
    def _tier_names(cls, value: dict[str, TokenLimits]) -> dict[str, TokenLimits]:
        for name in value:
            if not TIER_NAME.fullmatch(name):
                raise ValueError(f"tier name {name!r} must match {TIER_NAME.pattern}")
        return value

    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)
