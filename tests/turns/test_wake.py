"""Wake detection: prefix, RE2 wake pattern, empty question, listen mode."""

from __future__ import annotations

import pytest

from bridge.turns.wake import EmptyWake, ExplicitWake, ImplicitWake, WakePatternError, WakeRules

PREFIX = WakeRules(public_prefix="@ai")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@ai what time is it", ExplicitWake("what time is it")),
        ("@ai, build me a house", ExplicitWake("build me a house")),
        ("@ai:   hi  ", ExplicitWake("hi")),
        ("@ai", EmptyWake()),
        ("@ai   ", EmptyWake()),
        ("@ai ,:", EmptyWake()),
        ("@ai?", ExplicitWake("?")),
        ("@airplane is cool", None),
        ("@AI hello", None),
        ("hello @ai", None),
        (" @ai hello", None),
        ("", None),
    ],
)
def test_prefix(text: str, expected: object) -> None:
    assert PREFIX.classify(text, listen=False) == expected


def test_prefix_ending_in_punctuation_needs_no_boundary() -> None:
    rules = WakeRules(public_prefix="!")
    assert rules.classify("!give me light", listen=False) == ExplicitWake("give me light")


def test_listen_mode_makes_other_messages_implicit_wakes() -> None:
    assert PREFIX.classify("  anyone there? ", listen=True) == ImplicitWake("anyone there?")
    assert PREFIX.classify("@ai explicit", listen=True) == ExplicitWake("explicit")
    assert PREFIX.classify("@ai", listen=True) == EmptyWake()
    assert PREFIX.classify("   ", listen=True) is None
    assert PREFIX.classify("anyone there?", listen=False) is None


def test_wake_pattern_is_anchored_at_start_only() -> None:
    rules = WakeRules(public_prefix="@ai", wake_pattern=r"(?i)hey\s+bot\b")
    assert rules.needs_every_message
    assert rules.classify("Hey  bot, what now", listen=False) == ExplicitWake("what now")
    assert rules.classify("hey bot", listen=False) == EmptyWake()
    assert rules.classify("so hey bot what now", listen=False) is None
    assert rules.classify("hey botany", listen=False) is None
    assert rules.classify("@ai still works", listen=False) == ExplicitWake("still works")
    assert not PREFIX.needs_every_message


@pytest.mark.parametrize("pattern", ["(", "a{2,1}", "(?<!a)b", r"(a)\1"])
def test_invalid_pattern_is_a_clear_error(pattern: str) -> None:
    with pytest.raises(WakePatternError, match="chat.wake_pattern: not a valid RE2 pattern"):
        WakeRules(public_prefix="@ai", wake_pattern=pattern)


@pytest.mark.parametrize("pattern", ["x*", "", "(?i)(hey)?"])
def test_pattern_matching_empty_message_is_refused(pattern: str) -> None:
    with pytest.raises(WakePatternError, match="matches an empty message"):
        WakeRules(public_prefix="@ai", wake_pattern=pattern)


def test_empty_prefix_is_refused() -> None:
    with pytest.raises(WakePatternError, match="public_prefix"):
        WakeRules(public_prefix="")


def test_hostile_pattern_and_long_input_stay_linear() -> None:
    # A backtracking engine needs exponential time here; RE2 does not (no timing asserted).
    rules = WakeRules(public_prefix="@ai", wake_pattern=r"(a+)+b")
    assert rules.classify("a" * 4000 + "!", listen=False) is None


def test_from_settings_reads_chat_section() -> None:
    class Chat:
        public_prefix = "!bot"
        wake_pattern = None

    rules = WakeRules.from_settings(Chat())
    assert rules.classify("!bot hi", listen=False) == ExplicitWake("hi")
