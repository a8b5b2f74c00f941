"""Binding the budgets of `bridge.policy` into a turn: what a snapshot carries for one player.

A snapshot is built per permission set, so the tier, the guest's limits and the guest's tool
admission are fixed there; usage is counted by player UUID (never by session), so the public
session and every private lane spend from the same budget.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

from bridge.control import ControlPlane
from bridge.control.budgets_config import BudgetsConfig, GuestConfig
from bridge.control.tools_file import ToolSpec as ToolEntry
from bridge.metrics import NO_TIER, BridgeMetrics
from bridge.policy.budgets import (
    GUEST,
    NOTHING_HELD,
    BudgetRefusal,
    Budgets,
    Reservation,
    is_guest,
    player_limits,
    tier_of,
)
from bridge.policy.guest_tools import guest_may_use
from bridge.store.usage import UsageDetail
from bridge.tools.registry import ToolAdmission
from bridge.turns.ports import BudgetHold, PlayerRef, TurnLimits
from bridge.turns.session import PublicSession
from bridge.turns.tokens import raw_tokens_of_text


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


def budget_gate(
    budgets: Budgets,
    plane: ControlPlane,
    replayed: PublicSession,
    metrics: BridgeMetrics,
    player_uuid: str,
    granted: Collection[str],
    question: str,
    *,
    player_name: str | None = None,
) -> BudgetRefusal | None:
    """The budget gate before a turn: a budget that is spent, or that the turn's first request
    (the session ``replayed`` and the question, estimated) would pass. A refused player's name
    is remembered (a renamed player is refused by UUID, and ``/mineclaw usage <new name>`` must
    find them)."""
    config = plane.config.budgets
    if not config.enabled:
        return None
    upcoming = replayed.estimated_tokens(plane.config.context.max_messages)
    upcoming += replayed.calibration.calibrated(raw_tokens_of_text(question))
    refused = budgets.check(
        player_uuid=player_uuid, granted=granted, config=config, upcoming=upcoming
    )
    if refused is not None:  # the gate's refusals count beside the engine's stops
        tier, _ = player_limits(granted, config)
        metrics.budget_refusal(budget=refused.key(mid_turn=False), tier=tier)
        if player_name:
            budgets.book.saw(player_uuid, player_name)
    return refused
