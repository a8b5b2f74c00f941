"""Token budgets: which tier a player is in, whether they (and the server) may spend more, and
when a spent budget comes back.

Decided here, in code, from the permission facts the plugin reported and ``config.yml``'s
``budgets`` section; counted in the store (`bridge.store.usage`), so a restart changes nothing.
A day and a month are calendar periods in the configured time zone; the clock is injected, so
tests move time by hand.

A budget refuses when what is used has reached the limit, or when the next request (its
estimated size is ``upcoming``) would pass it: the turn engine asks before every model request
after the first, the chat gate before a turn (with the estimate of its first request: the
session it replays and the question).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal, Protocol
from zoneinfo import ZoneInfo

from bridge.control.budgets_config import TIER_NODE_PREFIX, BudgetsConfig, TokenLimits
from bridge.store.usage import SERVER, HolderUsage, Periods

Scope = Literal["player", "server"]
Period = Literal["day", "month"]

PLAYER_EXHAUSTED = "budgets.player_exhausted"
SERVER_EXHAUSTED = "budgets.server_exhausted"
PLAYER_STOPPED = "budgets.player_stopped"
SERVER_STOPPED = "budgets.server_stopped"
USAGE_OTHERS = "mineclaw.usage.others"
"""The node that lets ``/mineclaw usage <player>`` show someone else's usage."""
GUEST = "guest"


class UsageBook(Protocol):
    """What budgets need of the store (`bridge.store.usage.UsageLedger` is one)."""

    def add(
        self,
        *,
        player_uuid: str,
        player_name: str,
        periods: Periods,
        tokens: int,
        estimated: bool,
        at: datetime | None = None,
    ) -> None: ...

    def usage(self, holder: str, periods: Periods) -> HolderUsage: ...

    def find_player(self, name: str) -> tuple[str, str] | None: ...


def tier_node(tier: str) -> str:
    return TIER_NODE_PREFIX + tier


def tier_of(granted: Collection[str], config: BudgetsConfig) -> str | None:
    """The first tier of ``config.yml`` whose node the player holds; None for a guest."""
    for name in config.tiers:
        if tier_node(name) in granted:
            return name
    return None


def is_guest(granted: Collection[str] | None, config: BudgetsConfig) -> bool:
    """A guest gets less (`bridge.policy.guest_tools`); nobody is one while budgets are off.
    ``None`` (a turn without a player's facts, such as compaction) is never a guest."""
    return config.enabled and granted is not None and tier_of(granted, config) is None


def player_limits(granted: Collection[str], config: BudgetsConfig) -> tuple[str, TokenLimits]:
    """The tier's name (``guest`` without one) and its limits."""
    tier = tier_of(granted, config)
    if tier is None:
        return GUEST, config.guest
    return tier, config.tiers[tier]


def periods_at(moment: datetime, zone: ZoneInfo) -> Periods:
    local = moment.astimezone(zone)
    return Periods(day=local.date().isoformat(), month=f"{local.year:04d}-{local.month:02d}")


def next_reset(moment: datetime, zone: ZoneInfo, period: Period) -> datetime:
    """When the period ``moment`` falls in ends: the next local midnight, or the first of the
    next month at local midnight (daylight saving time included)."""
    local = moment.astimezone(zone)
    if period == "day":
        start = (local + timedelta(days=1)).date()
    else:
        year, month = (local.year + 1, 1) if local.month == 12 else (local.year, local.month + 1)
        start = local.date().replace(year=year, month=month, day=1)
    return datetime(start.year, start.month, start.day, tzinfo=zone)


def shown_time(moment: datetime, zone: ZoneInfo) -> str:
    local = moment.astimezone(zone)
    return f"{local:%Y-%m-%d %H:%M} {local.tzname() or zone.key}"


@dataclass(frozen=True, slots=True)
class BudgetRefusal:
    """A budget that is spent (or that the next request would pass)."""

    scope: Scope
    period: Period
    used: int
    limit: int
    resets_at: datetime
    zone: ZoneInfo

    def key(self, *, mid_turn: bool) -> str:
        if self.scope == "player":
            return PLAYER_STOPPED if mid_turn else PLAYER_EXHAUSTED
        return SERVER_STOPPED if mid_turn else SERVER_EXHAUSTED

    def values(self) -> dict[str, str]:
        return {
            "period": "daily" if self.period == "day" else "monthly",
            "used": str(self.used),
            "limit": str(self.limit),
            "resets": shown_time(self.resets_at, self.zone),
        }


@dataclass(frozen=True, slots=True)
class UsageLine:
    """One holder's use against their limits, for ``/mineclaw usage``."""

    usage: HolderUsage
    limits: TokenLimits


@dataclass(frozen=True, slots=True)
class UsageReport:
    tier: str
    player: UsageLine
    server: UsageLine
    day_resets: str
    month_resets: str


def _refusal(
    scope: Scope,
    usage: HolderUsage,
    limits: TokenLimits,
    upcoming: int,
    now: datetime,
    zone: ZoneInfo,
) -> BudgetRefusal | None:
    checks: tuple[tuple[Period, int, int | None], ...] = (
        ("day", usage.day.tokens, limits.day_tokens),
        ("month", usage.month.tokens, limits.month_tokens),
    )
    for period, used, limit in checks:
        if limit is not None and (used >= limit or used + upcoming > limit):
            resets = next_reset(now, zone, period)
            return BudgetRefusal(scope, period, used, limit, resets, zone)
    return None


class Budgets:
    """The budgets of one process: the ledger and the clock; the settings come with each call
    (the plane in force then), so a reload applies to the next check."""

    def __init__(
        self, book: UsageBook, *, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self._book = book
        self._clock = clock

    @property
    def book(self) -> UsageBook:
        return self._book

    def now(self) -> datetime:
        return self._clock()

    def check(
        self,
        *,
        player_uuid: str,
        granted: Collection[str],
        config: BudgetsConfig,
        upcoming: int = 0,
    ) -> BudgetRefusal | None:
        """The first budget that refuses (the player's, then the server's), or None."""
        if not config.enabled:
            return None
        now, zone = self._clock(), config.zone()
        periods = periods_at(now, zone)
        _, limits = player_limits(granted, config)
        own = self._book.usage(player_uuid, periods)
        refusal = _refusal("player", own, limits, upcoming, now, zone)
        if refusal is not None:
            return refusal
        server = self._book.usage(SERVER, periods)
        return _refusal("server", server, config.server, upcoming, now, zone)

    def record(
        self,
        *,
        player_uuid: str,
        player_name: str,
        tokens: int,
        estimated: bool,
        config: BudgetsConfig,
    ) -> None:
        """Count tokens (also while budgets are off, so ``/mineclaw usage`` is always true)."""
        now = self._clock()
        self._book.add(
            player_uuid=player_uuid,
            player_name=player_name,
            periods=periods_at(now, config.zone()),
            tokens=tokens,
            estimated=estimated,
            at=now,
        )

    def report(
        self, *, player_uuid: str, granted: Collection[str] | None, config: BudgetsConfig
    ) -> UsageReport:
        """``granted`` None: the player's tier is not known now (someone else asked)."""
        now, zone = self._clock(), config.zone()
        periods = periods_at(now, zone)
        if granted is None:
            tier, limits = "unknown tier", TokenLimits()
        else:
            tier, limits = player_limits(granted, config)
        return UsageReport(
            tier=tier,
            player=UsageLine(self._book.usage(player_uuid, periods), limits),
            server=UsageLine(self._book.usage(SERVER, periods), config.server),
            day_resets=shown_time(next_reset(now, zone, "day"), zone),
            month_resets=shown_time(next_reset(now, zone, "month"), zone),
        )
