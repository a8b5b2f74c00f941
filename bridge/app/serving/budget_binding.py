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
from bridge.policy.budgets import (
    GUEST,
    NOTHING_HELD,
    BudgetRefusal,
    Budgets,
    Reservation,
    is_guest,
    tier_of,
)
from bridge.policy.guest_tools import guest_may_use
from bridge.store.usage import UsageDetail
from bridge.tools.registry import ToolAdmission
from bridge.turns.ports import BudgetHold, PlayerRef, TurnLimits


@dataclasses.dataclass(frozen=True, slots=True)
class PlayerBudget:
    """`bridge.turns.ports.TurnBudget` for one permission set under one ``budgets`` section.
    ``granted`` None: no player's facts (a compaction's snapshot): the server's budget only."""

    budgets: Budgets
    granted: frozenset[str] | None
    config: BudgetsConfig

    @property
    def tier(self) -> str:
        """The tier's name; without one ``guest``, or ``none`` while budgets are off (nobody is
        a guest then) or for a request of nobody's."""
        if self.granted is None:
            return NO_TIER
        return tier_of(self.granted, self.config) or (GUEST if self.config.enabled else NO_TIER)

    def reserve(self, player: PlayerRef | None, worst: int, least: int | None = None) -> BudgetHold:
        held = self.budgets.reserve(
            player_uuid=self._payer(player),
            granted=self.granted,
            config=self.config,
            worst=worst,
            least=least,
        )
        if isinstance(held, BudgetRefusal):
            return BudgetHold(refusal=(held.key(mid_turn=True), held.values()))
        return BudgetHold(handle=held, tokens=None if held is NOTHING_HELD else held.tokens)

    def settle(
        self,
        hold: BudgetHold,
        player: PlayerRef | None,
        tokens: int,
        *,
        estimated: bool,
        purpose: str,
        detail: UsageDetail | None = None,
    ) -> None:
        reservation = hold.handle if isinstance(hold.handle, Reservation) else NOTHING_HELD
        self.budgets.settle(
            reservation,
            player_uuid=self._payer(player),
            player_name=None if player is None else player.name,
            tokens=tokens,
            estimated=estimated,
            purpose=purpose,
            config=self.config,
            detail=detail,
        )

    def spend(
        self,
        player: PlayerRef | None,
        tokens: int,
        *,
        estimated: bool,
        purpose: str,
        detail: UsageDetail | None = None,
    ) -> None:
        self.settle(
            BudgetHold(), player, tokens, estimated=estimated, purpose=purpose, detail=detail
        )

    def _payer(self, player: PlayerRef | None) -> str | None:
        return None if player is None or self.granted is None else player.uuid


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
