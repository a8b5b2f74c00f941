"""The usage ledger on both backends: totals per holder and period, kept across a reopen."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.errors import StoreError
from bridge.store.usage import SERVER, ModelDay, Periods, Totals, UsageDetail, UsageLedger
from tests.storage_backends import Backend

DEC3 = Periods(day="2026-12-03", month="2026-12")
DEC4 = Periods(day="2026-12-04", month="2026-12")
ALEX, STEVE = "00000000-0000-0000-0000-00000000000a", "00000000-0000-0000-0000-00000000000b"


def test_usage_adds_up_per_player_and_for_the_server_and_survives_a_reopen(
    backend: Backend,
) -> None:
    with backend.target.open_usage() as ledger:
        ledger.add(
            player_uuid=STEVE, player_name="Steve", periods=DEC3, tokens=100, estimated=False
        )
        ledger.add(player_uuid=STEVE, player_name="Steve", periods=DEC3, tokens=30, estimated=True)
        ledger.add(player_uuid=ALEX, player_name="Alex", periods=DEC4, tokens=7, estimated=False)
    with backend.target.open_usage() as reopened:
        steve = reopened.usage(STEVE, DEC3)
        assert steve.day == Totals(130, 30) and steve.month == Totals(130, 30)
        assert reopened.usage(STEVE, DEC4).day == Totals()  # a new day starts at zero
        assert reopened.usage(STEVE, DEC4).month == Totals(130, 30)
        assert reopened.usage(SERVER, DEC4).month == Totals(137, 30)
        assert reopened.usage(SERVER, DEC4).day == Totals(7, 0)
        assert reopened.find_player("steve") == (STEVE, "Steve")
        assert reopened.find_player("Herobrine") is None


def test_negative_usage_is_refused_and_nothing_changes(backend: Backend) -> None:
    with backend.target.open_usage() as ledger:
        with pytest.raises(StoreError):
            ledger.add(player_uuid=STEVE, player_name="S", periods=DEC3, tokens=-1, estimated=False)
        assert ledger.usage(SERVER, DEC3).day == Totals()


def test_a_newer_schema_is_refused_with_the_path(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "usage.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version=99")
    with pytest.raises(StoreError, match="newer than this bridge"):
        UsageLedger(path)


def test_a_usage_file_from_before_migrations_opens_with_its_totals(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "usage.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE usage_totals (holder TEXT NOT NULL, period_kind TEXT NOT NULL"
            " CHECK (period_kind IN ('day', 'month')), period TEXT NOT NULL,"
            " tokens INTEGER NOT NULL, estimated_tokens INTEGER NOT NULL,"
            " PRIMARY KEY (holder, period_kind, period));"
            "CREATE TABLE usage_players (uuid TEXT PRIMARY KEY, name TEXT NOT NULL,"
            " seen_at TEXT NOT NULL);"
            "CREATE INDEX usage_players_by_name ON usage_players (name COLLATE NOCASE);"
            f"INSERT INTO usage_totals VALUES ('{STEVE}', 'day', '2026-12-03', 50, 0);"
            f"INSERT INTO usage_players VALUES ('{STEVE}', 'Steve', '2026-12-03T00:00:00+00:00');"
            "PRAGMA user_version=1;"
        )
    with UsageLedger(path) as ledger:
        ledger.add(player_uuid=STEVE, player_name="Steve", periods=DEC3, tokens=5, estimated=False)
        assert ledger.usage(STEVE, DEC3).day == Totals(55, 0)
        assert ledger.find_player("STEVE") == (STEVE, "Steve")
    with sqlite3.connect(path) as conn:
        versions = conn.execute(
            "SELECT version FROM schema_migrations WHERE schema_name = 'usage'"
        ).fetchall()
    assert versions == [(1,), (2,), (3,), (4,)]


def test_usage_is_counted_by_purpose_and_a_request_of_nobodys_by_the_server_alone(
    backend: Backend,
) -> None:
    with backend.target.open_usage() as ledger:
        ledger.add(player_uuid=STEVE, player_name="Steve", periods=DEC3, tokens=50, estimated=False)
        ledger.add(
            player_uuid=STEVE,
            player_name="Steve",
            periods=DEC3,
            tokens=20,
            estimated=True,
            purpose="turn.stopped",
        )
        ledger.add(
            player_uuid=None,
            player_name=None,
            periods=DEC3,
            tokens=900,
            estimated=False,
            purpose="compaction",
        )
        assert ledger.usage(STEVE, DEC3).day == Totals(70, 20)
        assert ledger.usage(SERVER, DEC3).day == Totals(970, 20)
        server = ledger.by_purpose(SERVER, DEC3)
        assert {purpose: used.day for purpose, used in server.items()} == {
            "compaction": Totals(900, 0),
            "turn": Totals(50, 0),
            "turn.stopped": Totals(20, 20),
        }
        assert set(ledger.by_purpose(STEVE, DEC3)) == {"turn", "turn.stopped"}
        with pytest.raises(StoreError, match="purpose"):
            ledger.add(
                player_uuid=None,
                player_name=None,
                periods=DEC3,
                tokens=1,
                estimated=False,
                purpose="",
            )


def test_the_servers_usage_is_kept_per_day_model_and_tier_by_kind(backend: Backend) -> None:
    dec4 = Periods(day="2026-12-04", month="2026-12")
    turn = UsageDetail(
        "local/m1", "vip", input_tokens=300, cached_input_tokens=200, output_tokens=40
    )
    with backend.target.open_usage() as ledger:
        for periods in (DEC3, DEC3, dec4):
            ledger.add(
                player_uuid=STEVE,
                player_name="Steve",
                periods=periods,
                tokens=340,
                estimated=False,
                detail=turn,
            )
        guess = UsageDetail(
            "local/m1", "none", input_tokens=90, cached_input_tokens=500, output_tokens=10
        )
        ledger.add(
            player_uuid=None,
            player_name=None,
            periods=DEC3,
            tokens=100,
            estimated=True,
            purpose="compaction",
            detail=guess,
        )
        ledger.add(player_uuid=STEVE, player_name="Steve", periods=DEC3, tokens=5, estimated=False)
        assert ledger.models_since("2026-12-03") == [
            # More cached than input (a provider's odd report) counts as all cached.
            ModelDay("2026-12-03", "local/m1", "none", 90, 90, 10, 100),
            ModelDay("2026-12-03", "local/m1", "vip", 600, 400, 80, 0),
            ModelDay("2026-12-04", "local/m1", "vip", 300, 200, 40, 0),
        ]
        assert [row.day for row in ledger.models_since("2026-12-04")] == ["2026-12-04"]
        # The totals are counted as before, the usage without a detail too.
        assert ledger.usage(SERVER, DEC3).day == Totals(340 * 2 + 100 + 5, 100)


def test_a_player_is_found_by_a_former_name_after_a_rename(backend: Backend) -> None:
    with backend.target.open_usage() as ledger:
        ledger.add(player_uuid=STEVE, player_name="Steve", periods=DEC3, tokens=5, estimated=False)
        ledger.saw(STEVE, "Stevie")  # renamed (same UUID), seen again before any usage
        assert ledger.find_player("steve") == (STEVE, "Stevie")
        assert ledger.find_player("STEVIE") == (STEVE, "Stevie")
        # The old name taken later by someone else names the newer holder.
        ledger.add(player_uuid=ALEX, player_name="Steve", periods=DEC4, tokens=1, estimated=False)
        assert ledger.find_player("Steve") == (ALEX, "Steve")
        assert ledger.find_player("Stevie") == (STEVE, "Stevie")
