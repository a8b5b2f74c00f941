"""Budget decisions: tiers from permission facts, calendar periods in a time zone, refusals
with their reset time, and guests' tools."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from bridge.control.budgets_config import BudgetsConfig, GuestConfig
from bridge.policy.budgets import (
    BudgetRefusal,
    Budgets,
    Reservation,
    is_guest,
    next_reset,
    periods_at,
    tier_of,
)
from bridge.policy.guest_tools import guest_may_use
from bridge.store.target import StorageTarget
from bridge.store.usage import SERVER

STEVE = "00000000-0000-0000-0000-00000000000b"
CONFIG = BudgetsConfig.model_validate(
    {
        "enabled": True,
        "timezone": "Europe/Berlin",
        "server": {"day_tokens": 5000},
        "guest": {"day_tokens": 100},
        "tiers": {"vip": {"day_tokens": 3000}, "member": {"day_tokens": 1000}},
    }
)


def test_the_first_tier_held_wins_and_a_player_with_none_is_a_guest() -> None:
    both = {"mineclaw.budget.member", "mineclaw.budget.vip"}
    assert tier_of(both, CONFIG) == "vip"
    assert tier_of({"mineclaw.budget.member"}, CONFIG) == "member"
    assert tier_of({"mineclaw.budget.gold"}, CONFIG) is None
    assert is_guest(set(), CONFIG) and not is_guest({"mineclaw.budget.member"}, CONFIG)
    assert not is_guest(set(), BudgetsConfig())  # budgets off: nobody is a guest
    assert not is_guest(None, CONFIG)


def test_periods_and_resets_follow_the_time_zone_and_daylight_saving() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    late = datetime(2026, 12, 31, 23, 30, tzinfo=UTC)  # already 1 January in Berlin
    assert periods_at(late, berlin).day == "2027-01-01"
    assert periods_at(late, berlin).month == "2027-01"
    assert next_reset(late, berlin, "day") == datetime(2027, 1, 2, tzinfo=berlin)
    assert next_reset(late, berlin, "month") == datetime(2027, 2, 1, tzinfo=berlin)
    dec = datetime(2026, 12, 15, 12, tzinfo=UTC)
    assert next_reset(dec, berlin, "month") == datetime(2027, 1, 1, tzinfo=berlin)
    march = datetime(2026, 3, 28, 12, tzinfo=UTC)  # the night before summer time
    reset = next_reset(march, berlin, "day")
    assert reset.utcoffset() is not None and reset.astimezone(UTC).hour == 23


def test_a_spent_budget_refuses_until_the_day_turns(chosen_target: StorageTarget) -> None:
    now = [datetime(2026, 12, 3, 10, tzinfo=UTC)]
    with chosen_target.open_usage() as ledger:
        budgets = Budgets(ledger, clock=lambda: now[0])
        member = {"mineclaw.budget.member"}

        def spend(tokens: int) -> None:
            budgets.record(
                player_uuid=STEVE,
                player_name="Steve",
                tokens=tokens,
                estimated=False,
                config=CONFIG,
            )

        def check(upcoming: int = 0) -> object:
            return budgets.check(
                player_uuid=STEVE, granted=member, config=CONFIG, upcoming=upcoming
            )

        spend(900)
        assert check() is None
        refused = check(upcoming=200)  # the next request would pass it
        assert refused is not None and refused.scope == "player" and refused.period == "day"
        spend(100)
        refused = check()
        assert refused is not None
        assert refused.values() == {
            "period": "daily",
            "used": "1000",
            "limit": "1000",
            "resets": "2026-12-04 00:00 CET",
        }
        assert refused.key(mid_turn=False) == "budgets.player_exhausted"
        # Off: still counted, never refused.
        assert budgets.check(player_uuid=STEVE, granted=member, config=BudgetsConfig()) is None
        now[0] = datetime(2026, 12, 3, 23, 0, tzinfo=UTC)  # midnight in Berlin
        assert check() is None


def test_the_server_budget_counts_every_player(chosen_target: StorageTarget) -> None:
    now = datetime(2026, 12, 3, 10, tzinfo=UTC)
    with chosen_target.open_usage() as ledger:
        budgets = Budgets(ledger, clock=lambda: now)
        for n in range(5):
            budgets.record(
                player_uuid=f"uuid-{n}",
                player_name=f"P{n}",
                tokens=1000,
                estimated=False,
                config=CONFIG,
            )
        refused = budgets.check(
            player_uuid="someone-new", granted={"mineclaw.budget.vip"}, config=CONFIG
        )
        assert refused is not None and refused.scope == "server"
        assert refused.key(mid_turn=True) == "budgets.server_stopped"


def settle(budgets: Budgets, hold: Reservation, n: int, tokens: int) -> None:
    """Player ``n``'s request used ``tokens`` (reported)."""
    budgets.settle(
        hold,
        player_uuid=f"uuid-{n}",
        player_name=f"P{n}",
        tokens=tokens,
        estimated=False,
        purpose="turn",
        config=CONFIG,
    )


def test_many_players_at_the_servers_limit_overshoot_by_at_most_one_request(
    chosen_target: StorageTarget,
) -> None:
    # Forty members ask at once (every request in flight before any settles): only as many
    # as the server's remainder holds are let through, and what they used stays within it.
    now = datetime(2026, 12, 3, 10, tzinfo=UTC)
    member = {"mineclaw.budget.member"}
    with chosen_target.open_usage() as ledger:
        budgets = Budgets(ledger, clock=lambda: now)
        held = [
            budgets.reserve(player_uuid=f"uuid-{n}", granted=member, config=CONFIG, worst=400)
            for n in range(40)
        ]
        granted = [hold for hold in held if isinstance(hold, Reservation)]
        refused = [hold for hold in held if isinstance(hold, BudgetRefusal)]
        assert len(granted) == 12 and len(refused) == 28  # 12 x 400 <= 5000 < 13 x 400
        assert all(refusal.scope == "server" for refusal in refused)
        assert budgets.held(SERVER) == 4800
        for n, hold in enumerate(granted):
            settle(budgets, hold, n, 400)
        assert budgets.held(SERVER) == 0
        periods = periods_at(now, CONFIG.zone())
        assert ledger.usage(SERVER, periods).day.tokens == 4800 <= 5000


def test_reservations_from_many_threads_keep_the_server_within_its_limit(
    chosen_target: StorageTarget,
) -> None:
    now = datetime(2026, 12, 3, 10, tzinfo=UTC)
    member = {"mineclaw.budget.member"}
    with chosen_target.open_usage() as ledger:
        budgets = Budgets(ledger, clock=lambda: now)

        def player(n: int) -> int:
            spent = 0
            while True:
                hold = budgets.reserve(
                    player_uuid=f"uuid-{n}", granted=member, config=CONFIG, worst=150
                )
                if isinstance(hold, BudgetRefusal):
                    return spent
                settle(budgets, hold, n, 150)
                spent += 150

        with ThreadPoolExecutor(max_workers=8) as pool:
            spent = list(pool.map(player, range(16)))
        periods = periods_at(now, CONFIG.zone())
        assert ledger.usage(SERVER, periods).day.tokens == sum(spent) <= 5000
        assert sum(spent) > 5000 - 150 * 2  # and the budget was really used up
        assert all(ledger.usage(f"uuid-{n}", periods).day.tokens <= 1000 for n in range(16))


def test_a_released_reservation_gives_its_tokens_back_once(chosen_target: StorageTarget) -> None:
    now = datetime(2026, 12, 3, 10, tzinfo=UTC)
    with chosen_target.open_usage() as ledger:
        budgets = Budgets(ledger, clock=lambda: now)
        vip = {"mineclaw.budget.vip"}
        first = budgets.reserve(player_uuid=STEVE, granted=vip, config=CONFIG, worst=2000)
        assert isinstance(first, Reservation)
        second = budgets.reserve(player_uuid=STEVE, granted=vip, config=CONFIG, worst=2000)
        assert isinstance(second, BudgetRefusal) and second.scope == "player"
        assert second.used == 0  # the refusal shows what was used, not what is held
        budgets.release(first)
        budgets.release(first)
        assert budgets.held(STEVE) == 0 and budgets.held(SERVER) == 0
        again = budgets.reserve(player_uuid=STEVE, granted=vip, config=CONFIG, worst=2000)
        assert isinstance(again, Reservation)
        off = BudgetsConfig()
        assert budgets.reserve(player_uuid=STEVE, granted=vip, config=off, worst=10**9).tokens == 0


def test_a_budget_with_room_for_less_than_the_worst_case_holds_what_room_it_has(
    chosen_target: StorageTarget,
) -> None:
    now = datetime(2026, 12, 3, 10, tzinfo=UTC)
    member = {"mineclaw.budget.member"}  # 1000 a day; the server 5000
    with chosen_target.open_usage() as ledger:
        budgets = Budgets(ledger, clock=lambda: now)
        budgets.record(
            player_uuid=STEVE, player_name="Steve", tokens=600, estimated=False, config=CONFIG
        )
        # 400 left: a request of 700 at worst still goes with 400 held, if 300 would do.
        fitted = budgets.reserve(
            player_uuid=STEVE, granted=member, config=CONFIG, worst=700, least=300
        )
        assert isinstance(fitted, Reservation) and fitted.tokens == 400
        # Everything is held now: nothing more fits, however little it asks.
        refused = budgets.reserve(
            player_uuid=STEVE, granted=member, config=CONFIG, worst=700, least=1
        )
        assert isinstance(refused, BudgetRefusal) and refused.used == 600
        budgets.release(fitted)
        # Less room than ``least``: refused, as without it.
        short = budgets.reserve(
            player_uuid=STEVE, granted=member, config=CONFIG, worst=700, least=401
        )
        assert isinstance(short, BudgetRefusal) and short.scope == "player"
        # The server's room counts as well: 5000 less 4800 spent by others leaves 200.
        budgets.record(
            player_uuid=None, player_name=None, tokens=4200, estimated=False, config=CONFIG
        )
        by_server = budgets.reserve(
            player_uuid=STEVE, granted=member, config=CONFIG, worst=700, least=100
        )
        assert isinstance(by_server, Reservation) and by_server.tokens == 200


def test_guests_get_no_paid_or_side_effect_tool_unless_allowed() -> None:
    guest = GuestConfig()
    assert guest_may_use("read", handler="read", cost="free", guest=guest)
    assert not guest_may_use("search", handler="read", cost="paid", guest=guest)
    assert not guest_may_use("run_command", handler="run_command", cost="free", guest=guest)
    assert not guest_may_use("call_function", handler="call_function", cost="free", guest=guest)
    allowed = GuestConfig(allow_tools=["search", "run_command"])
    assert guest_may_use("search", handler="read", cost="paid", guest=allowed)
    assert guest_may_use("run_command", handler="run_command", cost="free", guest=allowed)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"timezone": "Mars/Olympus"}, "not a time zone name"),
        ({"tiers": {"VIP!": {}}}, "tier name"),
        ({"tiers": {"vip": {"day_tokens": 0}}}, "greater than or equal to 1"),
        ({"guest": {"allow_tools": ["Run Command"]}}, "not a tool name"),
        ({"tiers": {"vip": {"day_tokns": 5}}}, "xtra"),
    ],
)
def test_bad_budget_settings_are_refused_naming_the_problem(
    raw: dict[str, object], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        BudgetsConfig.model_validate(raw)
