"""A player's conversations as bookkeeping: ids never reused, the active one always on the
shelf, the limit, titles cleaned."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bridge.conversations.shelf import (
    MAX_TITLE_CHARS,
    LimitReached,
    Shelf,
    clean_title,
    first,
    lane_suffix,
    shown_time,
)
from bridge.conversations.titles import MAX_PART_CHARS, title_document, title_from_reply

NOW = datetime(2026, 12, 4, 23, 0, tzinfo=UTC)


def test_new_conversations_get_the_next_id_and_become_active_ids_are_never_reused() -> None:
    shelf = Shelf(first(NOW))
    assert [c.id for c in shelf.state.conversations] == ["1"] and shelf.active.id == "1"
    two = shelf.start("Redstone", NOW, limit=10)
    assert (two.id, two.title, shelf.active.id) == ("2", "Redstone", "2")
    assert shelf.delete("2", NOW) is not None
    assert shelf.active.id == "1"  # the one last asked in (the only one left)
    assert shelf.start(None, NOW, limit=10).id == "3"  # 2 is not given again


def test_the_limit_refuses_a_new_conversation_until_one_is_deleted() -> None:
    shelf = Shelf(first(NOW))
    shelf.start(None, NOW, limit=2)
    with pytest.raises(LimitReached):
        shelf.start(None, NOW, limit=2)
    shelf.delete("1", NOW)
    assert shelf.start(None, NOW, limit=2).id == "3"


def test_deleting_the_active_one_activates_the_last_asked_or_a_new_empty_one() -> None:
    shelf = Shelf(first(NOW))
    shelf.asked(NOW + timedelta(minutes=5))  # conversation 1 asked in last
    shelf.start(None, NOW, limit=10)
    shelf.start(None, NOW + timedelta(minutes=1), limit=10)
    assert shelf.active.id == "3"
    shelf.delete("3", NOW)
    assert shelf.active.id == "1"
    shelf.delete("2", NOW)
    shelf.delete("1", NOW)
    assert [c.id for c in shelf.state.conversations] == ["4"] and shelf.active.id == "4"
    assert shelf.delete("9", NOW) is None and shelf.switch("9") is None


def test_newest_first_orders_by_last_activity_then_start() -> None:
    shelf = Shelf(first(NOW))
    shelf.start(None, NOW + timedelta(minutes=1), limit=10)
    shelf.switch("1")
    shelf.asked(NOW + timedelta(minutes=2))
    assert [c.id for c in shelf.newest_first()] == ["1", "2"]


def test_titles_are_cleaned_cut_and_a_players_own_is_never_replaced() -> None:
    assert clean_title("  a\tb\n\x1b[31mc\u202e ") == "a b [31mc"
    assert clean_title(" \x00 ") is None
    long = clean_title("x" * 100)
    assert long is not None and len(long) == MAX_TITLE_CHARS and long.endswith("…")
    shelf = Shelf(first(NOW))
    shelf.rename("1", "Mine")
    assert not shelf.titled("1", "Generated")
    assert shelf.active.title == "Mine"
    shelf.start(None, NOW, limit=10)
    assert shelf.titled("2", "Generated") and shelf.active.title == "Generated"


def test_lane_suffix_and_shown_time() -> None:
    assert lane_suffix("1") == "" and lane_suffix("12") == "-12"
    assert shown_time(None) == "-"
    assert shown_time(NOW) == "2026-12-04 23:00 UTC"


def test_a_models_reply_becomes_a_title_without_quotes_or_a_full_stop() -> None:
    assert title_from_reply('"Building a redstone clock."\nextra') == "Building a redstone clock"
    assert title_from_reply("Title: 红石时钟。") == "红石时钟"
    assert title_from_reply("  \n ") is None
    assert title_from_reply('""') is None
    document = title_document("q" * 2000, " the answer ")
    assert document.count("q") == MAX_PART_CHARS and document.endswith("Answer: the answer")
