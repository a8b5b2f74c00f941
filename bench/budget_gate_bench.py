"""The chat path's budget gate with reservations, against the gate without them, in one run.

Before a turn the chat path asks whether the asker's budget and the server's may spend more
(`bridge.policy.budgets.Budgets.check`): the player's and the server's totals read from the
usage ledger (SQLite, WAL). Budgets as reservations add a lock and what requests in flight hold
(here eight, as many lanes streaming at once). The baseline, measured in the same run on the
same ledger, is the gate as it was before reservations: the same two reads and the same
comparisons without the lock and the holds. The two alternate call by call, so the machine's
load falls on both alike; the median of the rounds' p99 ratios counts. Budget: at most 1.05.

Run: ``python -m bench.budget_gate_bench [--calls 5000] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bridge.control.budgets_config import BudgetsConfig
from bridge.policy.budgets import (
    BudgetRefusal,
    Budgets,
    _refusal,
    periods_at,
    player_limits,
)
from bridge.store.usage import SERVER, UsageLedger

BUDGET = 1.05
CONFIG = BudgetsConfig.model_validate(
    {
        "enabled": True,
        "server": {"day_tokens": 10**9},
        "tiers": {"member": {"day_tokens": 10**8}},
    }
)
MEMBER = frozenset({"mineclaw.budget.member"})
NOW = datetime(2026, 12, 3, 12, tzinfo=UTC)


def gate_before(ledger: UsageLedger, player: str, upcoming: int) -> BudgetRefusal | None:
    """The gate before reservations: the player's totals, then the server's."""
    zone = CONFIG.zone()
    periods = periods_at(NOW, zone)
    _, limits = player_limits(MEMBER, CONFIG)
    refusal = _refusal("player", ledger.usage(player, periods), limits, upcoming, NOW, zone)
    if refusal is not None:
        return refusal
    return _refusal("server", ledger.usage(SERVER, periods), CONFIG.server, upcoming, NOW, zone)


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=5000, help="measured calls per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (the median ratio counts)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder, UsageLedger(Path(folder) / "u.sqlite3") as ledger:
        budgets = Budgets(ledger, clock=lambda: NOW)
        players = [f"player-{n}" for n in range(50)]
        for player in players:
            budgets.record(
                player_uuid=player, player_name=player, tokens=1000, estimated=False, config=CONFIG
            )
        in_flight = [
            budgets.reserve(player_uuid=p, granted=MEMBER, config=CONFIG, worst=1400)
            for p in players[:8]
        ]
        assert all(not isinstance(hold, BudgetRefusal) for hold in in_flight)
        rounds: list[tuple[list[float], list[float]]] = []
        clock = time.perf_counter
        for _ in range(args.rounds):
            before: list[float] = []
            after: list[float] = []
            for call in range(args.calls + 500):  # the first 500 of a round warm both up
                player = players[call % len(players)]
                # Alternating which goes first, so neither always finds the cache the other left.
                for first in (call % 2 == 0, call % 2 != 0):
                    start = clock()
                    if first:
                        gate_before(ledger, player, 400)
                    else:
                        budgets.check(
                            player_uuid=player, granted=MEMBER, config=CONFIG, upcoming=400
                        )
                    took = clock() - start
                    if call >= 500:
                        (before if first else after).append(took)
            rounds.append((before, after))
    ratios = []
    for number, (before, after) in enumerate(rounds, 1):
        ratio = percentile(after, 0.99) / percentile(before, 0.99)
        ratios.append(ratio)
        print(
            f"round {number}: before p50 {statistics.median(before) * 1e6:6.1f} us"
            f" p99 {percentile(before, 0.99) * 1e6:7.1f} us; with reservations"
            f" p50 {statistics.median(after) * 1e6:6.1f} us"
            f" p99 {percentile(after, 0.99) * 1e6:7.1f} us; p99 ratio {ratio:.3f}"
        )
    ratio = statistics.median(ratios)
    verdict = "met" if ratio <= BUDGET else "NOT met"
    print(f"median p99 ratio over {len(ratios)} rounds {ratio:.3f}; {verdict} budget {BUDGET}")
    return 0 if ratio <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
