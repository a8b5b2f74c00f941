"""Binding the budgets of `bridge.policy` into a turn: what a snapshot carries for one player.

A snapshot is built per permission set, so the tier, the guest's limits and the guest's tool
admission are fixed there; usage is counted by player UUID (never by session), so the public
session and every private lane spend from the same budget.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

from bridge.control.budgets_config import BudgetsConfig, GuestConfig
from bridge.control.tools_file import ToolSpec as ToolEntry
from bridge.metrics import NO_TIER
from bridge.policy.budgets import GUEST, Budgets, is_guest, tier_of
from bridge.policy.guest_tools import guest_may_use
from bridge.tools.registry import ToolAdmission
from bridge.turns.ports import PlayerRef, TurnLimits


@dataclasses.dataclass(frozen=True, slots=True)
class PlayerBudget:
    """`bridge.turns.ports.TurnBudget` for one permission set under one ``budgets`` section."""

    budgets: Budgets
    granted: frozenset[str]
    config: BudgetsConfig

    @property
    def tier(self) -> str:
        """The tier's name; without one ``guest``, or ``none`` while budgets are off (nobody is
        a guest then)."""
        return tier_of(self.granted, self.config) or (GUEST if self.config.enabled else NO_TIER)

    def spend(self, player: PlayerRef, tokens: int, *, estimated: bool) -> None:
        self.budgets.record(
            player_uuid=player.uuid,
            player_name=player.name,
            tokens=tokens,
            estimated=estimated,
            config=self.config,
        )

    def refusal(self, player: PlayerRef, upcoming: int) -> tuple[str, dict[str, str]] | None:
        refused = self.budgets.check(
            player_uuid=player.uuid, granted=self.granted, config=self.config, upcoming=upcoming
        )
        return None if refused is None else (refused.key(mid_turn=True), refused.values())


def guest_admission(guest: GuestConfig) -> ToolAdmission:
    def admit(name: str, entry: ToolEntry) -> bool:
        return guest_may_use(name, handler=entry.handler, cost=entry.cost, guest=guest)

    return admit


def limits_for(
    limits: TurnLimits, granted: Collection[str] | None, config: BudgetsConfig
) -> TurnLimits:
    """A guest's turn gets the smaller output cap and fewer tool rounds."""
    if not is_guest(granted, config):
        return limits
    guest = config.guest
    return dataclasses.replace(
        limits,
        max_tool_rounds=min(limits.max_tool_rounds, guest.max_tool_rounds),
        max_output_tokens=guest.max_output_tokens,
    )
