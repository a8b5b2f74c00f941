"""Reply capping and action-bar tails."""

from __future__ import annotations

from bridge.turns.output_text import action_bar_tail, cap_reply


def test_short_reply_is_untouched() -> None:
    assert cap_reply("<red>hi</red>", 100) == "<red>hi</red>"


def test_long_reply_is_cut_with_ellipsis_within_limit() -> None:
    capped = cap_reply("a" * 50, 20)
    assert capped == "a" * 19 + "…"
    assert len(capped) == 20


def test_cut_never_leaves_half_a_tag() -> None:
    capped = cap_reply("hello <gradient:red:blue>world</gradient>", 12)
    assert capped == "hello…"


def test_action_bar_shows_newest_text_on_one_line() -> None:
    assert action_bar_tail("one\ntwo  three", 50) == "one two three"
    tail = action_bar_tail("x" * 30 + " the end", 10)
    assert tail == "…x the end"
    assert len(tail) <= 10


def test_action_bar_skips_a_torn_tag() -> None:
    assert action_bar_tail("aaaa <bold>bb</bold> cc", 10) == "…cc"
    assert action_bar_tail("aaaa <bold>bb</bold> cc", 14) == "…bb</bold> cc"
