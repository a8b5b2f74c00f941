"""``/mineclaw usage`` shows limits only while budgets are on: with budgets off it said
"today 38695 of 20000", a limit that refused nothing."""

from __future__ import annotations

from datetime import UTC, datetime

from bridge.app.commands.usage import usage_lines
from bridge.control.budgets_config import BudgetsConfig
from bridge.policy.budgets import Budgets
from bridge.store.target import StorageTarget

STEVE = "00000000-0000-0000-0000-00000000000b"


def _report(target: StorageTarget, config: BudgetsConfig) -> list[str]:
    now = datetime(2026, 12, 3, 10, tzinfo=UTC)
    with target.open_usage() as ledger:
        budgets = Budgets(ledger, clock=lambda: now)
        budgets.record(
            player_uuid=STEVE, player_name="Steve", tokens=38695, estimated=False, config=config
        )
        return usage_lines(
            budgets,
            config,
            asker_uuid=STEVE,
            asker_name="Steve",
            granted=set(),
            target=None,
            ledger=ledger,
        )


def test_budgets_off_show_no_limit(chosen_target: StorageTarget) -> None:
    lines = _report(chosen_target, BudgetsConfig())
    assert not any(" of " in line and "today" in line for line in lines), lines
    assert any("today 38695 (no limit)" in line for line in lines), lines
    assert any(line.startswith("budgets off") for line in lines)
    # No tier either: "Steve (guest)" read as a guest's smaller limits and missing tools.
    assert lines[0].startswith("Steve: today 38695 (no limit)"), lines


def test_budgets_on_show_the_limit(chosen_target: StorageTarget) -> None:
    lines = _report(chosen_target, BudgetsConfig(enabled=True))
    assert any("today 38695 of 20000" in line for line in lines), lines
    assert lines[0].startswith("Steve (guest): "), lines  # no tier node: the first tier
