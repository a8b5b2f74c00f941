"""Token budgets: which tier a player is in, whether they (and the server) may spend more, and
when a spent budget comes back.

Decided here, in code, from the permission facts the plugin reported and ``config.yml``'s
``budgets`` section; counted in the store (`bridge.store.usage`), so a restart changes nothing.
A day and a month are calendar periods in the configured time zone; the clock is injected, so
tests move time by hand.

A budget refuses when what is used has reached the limit, or when the next request (its
estimated size is ``upcoming``) would pass it: the turn engine asks before every model request,
the chat gate before a turn (with the estimate of its first request: the session it replays
and the question).

Budgets are reservations. Before a request the turn engine reserves its worst case (the prompt's
estimate plus the output cap) from the player and the server; the check counts what is used
plus what every request in flight has reserved, under one lock, so two lanes of one player, or
many players at the server's limit, cannot all pass on the same remainder. After the request
its real use is recorded and the reservation let go: concurrent requests overshoot a limit by at
most what one request uses beyond its reservation (nothing, when the provider keeps to the
output cap and the prompt estimate holds).

What is billed (`record`): every request a provider served, whatever happened after (answered,
stopped, failed after its answer started streaming, retried), each under its ``purpose``. The
asker's budget and the server's pay for a player's turns; the server's alone for a request no
player asked for (``player_uuid=None``: compaction, listen decisions, titles).
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal, Protocol
from zoneinfo import ZoneInfo

from bridge.control.budgets_config import TIER_NODE_PREFIX, BudgetsConfig, TokenLimits
from bridge.errors import StoreError
from bridge.store.usage import SERVER, HolderUsage, Periods, UsageDetail

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
        player_uuid: str | None,
        player_name: str | None,
        periods: Periods,
        tokens: int,
        estimated: bool,
        purpose: str = "turn",
        at: datetime | None = None,
        detail: UsageDetail | None = None,
    ) -> None: ...

    def usage(self, holder: str, periods: Periods) -> HolderUsage: ...

    def find_player(self, name: str) -> tuple[str, str] | None: ...

    def saw(self, player_uuid: str, player_name: str, at: datetime | None = None) -> None: ...


@dataclass(eq=False, slots=True)
class Reservation:
    """Tokens held for one request in flight, from each of ``holders``, until it settles."""

    holders: tuple[str, ...]
    tokens: int
    settled: bool = field(default=False)


NOTHING_HELD = Reservation((), 0, settled=True)
"""What a request holds while budgets are off."""


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
    held: int = 0,
) -> BudgetRefusal | None:
    """``held``: what requests in flight reserved; counted as used, but the refusal shows
    what was really used."""
    checks: tuple[tuple[Period, int, int | None], ...] = (
        ("day", usage.day.tokens, limits.day_tokens),
        ("month", usage.month.tokens, limits.month_tokens),
    )
    for period, used, limit in checks:
        if limit is not None and (used + held >= limit or used + held + upcoming > limit):
            resets = next_reset(now, zone, period)
            return BudgetRefusal(scope, period, used, limit, resets, zone)
    return None


@dataclass(frozen=True, slots=True)
class _Standing:
    """One holder's use, limits and what its requests in flight hold."""

    scope: Scope
    usage: HolderUsage
    limits: TokenLimits
    held: int


def _room(standing: list[_Standing]) -> int | None:
    """The most one more request may hold under every limit (None when nothing limits)."""
    rooms = [
        limit - used - one.held
        for one in standing
        for used, limit in (
            (one.usage.day.tokens, one.limits.day_tokens),
            (one.usage.month.tokens, one.limits.month_tokens),
        )
        if limit is not None
    ]
    return min(rooms) if rooms else None


UNRECORDED_MAX = 10_000
"""The most usages kept while the ledger cannot be written (the oldest go first past it)."""


@dataclass(frozen=True, slots=True)
class _Usage:
    """One ``UsageLedger.add`` call, kept until the ledger takes it."""

    player_uuid: str | None
    player_name: str | None
    periods: Periods
    tokens: int
    estimated: bool
    purpose: str
    at: datetime
    detail: UsageDetail | None

    def add_to(self, book: UsageBook) -> None:
        book.add(
            player_uuid=self.player_uuid,
            player_name=self.player_name,
            periods=self.periods,
            tokens=self.tokens,
            estimated=self.estimated,
            purpose=self.purpose,
            at=self.at,
            detail=self.detail,
        )


class Budgets:
    """The budgets of one process: the ledger and the clock; the settings come with each call
    (the plane in force then), so a reload applies to the next check."""

    def __init__(
        self, book: UsageBook, *, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self._book = book
        self._clock = clock
        # Reservations of the requests in flight, per holder; the lock makes a check and the
        # reservation that follows it one step (callers are worker threads).
        self._lock = threading.Lock()
        self._held: dict[str, int] = {}
        # Usage the ledger refused (its database lost or hung), counted by the next record
        # that reaches it: a provider bills what it served whether the store was there or not.
        self._unrecorded: collections.deque[_Usage] = collections.deque(maxlen=UNRECORDED_MAX)
        self._unrecorded_lock = threading.Lock()

    @property
    def book(self) -> UsageBook:
        return self._book

    def now(self) -> datetime:
        return self._clock()

    def held(self, holder: str) -> int:
        """Tokens reserved from ``holder`` (a UUID or ``SERVER``) by requests in flight."""
        with self._lock:
            return self._held.get(holder, 0)

    def check(
        self,
        *,
        player_uuid: str | None,
        granted: Collection[str] | None,
        config: BudgetsConfig,
        upcoming: int = 0,
    ) -> BudgetRefusal | None:
        """The first budget that refuses (the player's, then the server's), or None; what
        requests in flight reserved counts as used. ``player_uuid`` None: the server's only."""
        if not config.enabled:
            return None
        # No lock: a check takes nothing (the chat gate, before a turn), and reading what is
        # held is one dictionary look-up; only `reserve` makes its check and hold one step.
        return self._check(player_uuid, granted, config, upcoming)

    def reserve(
        self,
        *,
        player_uuid: str | None,
        granted: Collection[str] | None,
        config: BudgetsConfig,
        worst: int,
        least: int | None = None,
    ) -> Reservation | BudgetRefusal:
        """Hold ``worst`` tokens (a request's prompt and its output cap) from the player and
        the server, or the budget that cannot hold them. Settle or release it after.

        ``least``: where ``worst`` does not fit but this does, hold all the room there is
        instead (the reservation's ``tokens`` says how much), so a budget's last tokens buy
        a shorter answer rather than a refusal."""
        if not config.enabled:
            return NOTHING_HELD
        worst = max(0, worst)
        with self._lock:
            standing = self._standing(player_uuid, granted, config)
            refusal = self._first_refusal(standing, config, worst)
            if refusal is not None:
                room = _room(standing)
                if least is None or room is None or room < max(1, least):
                    return refusal
                worst = room
            holders = (SERVER,) if player_uuid is None else (player_uuid, SERVER)
            for holder in holders:
                self._held[holder] = self._held.get(holder, 0) + worst
            return Reservation(holders, worst)

    def release(self, reservation: Reservation) -> None:
        """Let a reservation go (once; a second call does nothing)."""
        with self._lock:
            if reservation.settled:
                return
            reservation.settled = True
            for holder in reservation.holders:
                left = self._held.get(holder, 0) - reservation.tokens
                if left > 0:
                    self._held[holder] = left
                else:
                    self._held.pop(holder, None)

    def settle(
        self,
        reservation: Reservation,
        *,
        player_uuid: str | None,
        player_name: str | None,
        tokens: int,
        estimated: bool,
        purpose: str,
        config: BudgetsConfig,
        detail: UsageDetail | None = None,
    ) -> None:
        """Record what the request used, then let its reservation go (also when recording
        fails: a ledger error must not hold tokens forever). Recorded first, so a check in
        between counts the tokens twice rather than not at all."""
        try:
            if tokens <= 0:
                return
            self.record(
                player_uuid=player_uuid,
                player_name=player_name,
                tokens=tokens,
                estimated=estimated,
                purpose=purpose,
                config=config,
                detail=detail,
            )
        finally:
            self.release(reservation)

    def _check(
        self,
        player_uuid: str | None,
        granted: Collection[str] | None,
        config: BudgetsConfig,
        upcoming: int,
    ) -> BudgetRefusal | None:
        standing = self._standing(player_uuid, granted, config)
        return self._first_refusal(standing, config, upcoming)

    def _standing(
        self, player_uuid: str | None, granted: Collection[str] | None, config: BudgetsConfig
    ) -> list[_Standing]:
        """The player's (when known) and then the server's use, limits and holds, read once."""
        periods = periods_at(self._clock(), config.zone())
        out: list[_Standing] = []
        if player_uuid is not None and granted is not None:
            _, limits = player_limits(granted, config)
            own = self._book.usage(player_uuid, periods)
            out.append(_Standing("player", own, limits, self._held.get(player_uuid, 0)))
        server = self._book.usage(SERVER, periods)
        out.append(_Standing("server", server, config.server, self._held.get(SERVER, 0)))
        return out

    def _first_refusal(
        self, standing: list[_Standing], config: BudgetsConfig, upcoming: int
    ) -> BudgetRefusal | None:
        now, zone = self._clock(), config.zone()
        for one in standing:
            refusal = _refusal(one.scope, one.usage, one.limits, upcoming, now, zone, one.held)
            if refusal is not None:
                return refusal
        return None

    def record(
        self,
        *,
        player_uuid: str | None,
        player_name: str | None,
        tokens: int,
        estimated: bool,
        config: BudgetsConfig,
        purpose: str = "turn",
        detail: UsageDetail | None = None,
    ) -> None:
        """Count tokens a provider served under ``purpose`` (also while budgets are off, so
        ``/mineclaw usage`` is always true): the player's and the server's, or the server's
        alone when ``player_uuid`` is None. The one call for every kind of request."""
        now = self._clock()
        usage = _Usage(
            player_uuid=player_uuid,
            player_name=player_name,
            periods=periods_at(now, config.zone()),  # the day it was served, not counted
            tokens=tokens,
            estimated=estimated,
            purpose=purpose,
            at=now,
            detail=detail,
        )
        with self._unrecorded_lock:
            self._unrecorded.append(usage)
            try:
                self._write_unrecorded()
            except StoreError as exc:
                raise StoreError(
                    f"{exc}; {len(self._unrecorded)} kept, counted once the store answers again"
                ) from exc

    def flush_unrecorded(self) -> int:
        """Write the usages kept since the ledger refused them, without waiting for the next
        record: when a server links (its lease was just read, so the store answers) and before
        the bridge gives its servers up, so what a provider served is in the ledger rather than
        in a process about to exit. How many are still kept (the store still away)."""
        with self._unrecorded_lock:
            try:
                self._write_unrecorded()
            except StoreError:
                pass  # kept for the next record or flush; the failed record said why
            return len(self._unrecorded)

    def _write_unrecorded(self) -> None:
        """Oldest first, each removed once written (the lock held)."""
        while self._unrecorded:
            self._unrecorded[0].add_to(self._book)
            self._unrecorded.popleft()

    @property
    def unrecorded(self) -> int:
        """Usages kept since the ledger refused them, waiting for the store to answer again."""
        with self._unrecorded_lock:
            return len(self._unrecorded)

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
