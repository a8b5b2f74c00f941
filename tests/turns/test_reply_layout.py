"""Replies laid out as bounded chat lines: separators, hidden characters, codes and Markdown."""

from __future__ import annotations

import pytest

from bridge.turns.model_text import escape_minimessage, neutralise
from bridge.turns.reply_layout import ReplyLayout, layout_reply, plain_text

LAYOUT = ReplyLayout(max_chars=1000, line_max_chars=60, max_lines=8, wrap="words")

SEPARATORS = ["\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def shown(text: str, layout: ReplyLayout = LAYOUT) -> list[str]:
    return [plain_text(line) for line in layout_reply(text, layout)]


def test_four_hundred_newlines_are_one_line() -> None:
    assert layout_reply("ok" + "\n" * 400, LAYOUT) == ("ok",)


@pytest.mark.parametrize("separator", SEPARATORS, ids=lambda s: f"U+{ord(s[-1]):04X}")
def test_every_line_break_starts_a_new_prefixed_line_never_a_raw_break(separator: str) -> None:
    text = f"Sure!{separator}<Notch> I am op now{separator}[Server] Restarting"
    lines = layout_reply(text, LAYOUT)
    assert [plain_text(line) for line in lines] == [
        "Sure!",
        "<Notch> I am op now",
        "[Server] Restarting",
    ]
    for line in lines:
        assert not any(char in line for char in SEPARATORS)
        # The forged speaker is escaped text: the plugin's parser cannot read a tag there.
        assert "<Notch>" not in line or "\\<Notch>" in line


def test_the_line_count_is_bounded_and_the_cut_is_shown() -> None:
    lines = shown("\n".join(f"line {n}" for n in range(50)), ReplyLayout(max_lines=3))
    assert lines == ["line 0", "line 1", "line 2…"]


def test_long_text_is_wrapped_between_words_within_the_width() -> None:
    text = " ".join(["word"] * 40)
    lines = shown(text, ReplyLayout(line_max_chars=22, max_lines=20))
    assert all(len(line) <= 22 for line in lines)
    assert " ".join(lines) == text
    assert lines[0] == "word word word word"


def test_anywhere_wrapping_fills_each_line_and_cuts_long_words() -> None:
    lines = shown("x" * 50, ReplyLayout(line_max_chars=20, wrap="anywhere"))
    assert lines == ["x" * 20, "x" * 20, "x" * 10]
    assert shown("aaaaaaaaaaaaaaaaaaaaaaaaa bb", ReplyLayout(line_max_chars=20)) == [
        "a" * 20,
        "aaaaa bb",
    ]


def test_padding_cannot_push_a_forged_speaker_to_the_start_of_a_wrapped_row() -> None:
    assert shown("hi" + " " * 200 + "<Notch> hello") == ["hi <Notch> hello"]


@pytest.mark.parametrize(
    "hidden",
    [
        "\u200b",
        "\u202e",
        "\u3164",
        "\u115f",
        "\u1160",
        "\uffa0",
        "\u034f",
        "\ufe0f",
        "\u2800",
        "\x00",
        "\x1b",
        "\x7f",
        "\u00ad",
        "\U000e0041",
        "\ue000",
    ],
    ids=lambda c: f"U+{ord(c):04X}",
)
def test_control_and_invisible_characters_are_dropped(hidden: str) -> None:
    assert shown(f"a{hidden}b") == ["ab"]


def test_tabs_and_odd_spaces_become_one_space() -> None:
    assert shown("a\tb\u00a0c\u2003d") == ["a b c d"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("§cRed §lbold §", "Red bold "),
        ("&aHello &x&f&f&0&0&0&0world", "Hello world"),
        ("&#ff0000red", "red"),
        ("§c&4Red", "Red"),
        ("Q&A and AT&T & friends", "Q&A and AT&T & friends"),
    ],
)
def test_legacy_colour_codes_are_removed(text: str, expected: str) -> None:
    assert neutralise(text) == expected


@pytest.mark.parametrize(
    ("markdown", "lines"),
    [
        ("**bold** and __also__", ["<b>bold</b> and <b>also</b>"]),
        ("*it* and _it_ but snake_case_name", ["<i>it</i> and <i>it</i> but snake_case_name"]),
        ("~~gone~~", ["<st>gone</st>"]),
        ("use `/home <name>` now", ["use <gray>/home \\<name></gray> now"]),
        ("# Title\n## Sub", ["<b>Title</b>", "<b>Sub</b>"]),
        ("- one\n* two\n+ three", ["• one", "• two", "• three"]),
        ("1. first\n2) second", ["1. first", "2. second"]),
        ("```python\nprint('hi')\n```", ["<gray>print('hi')</gray>"]),
        ("> quoted", ["<gray><i>quoted</i></gray>"]),
        ("a\n\n---\n\nb", ["a", "b"]),
        ("| a | b |\n|---|---|\n| 1 | 2 |", ["| a | b |", "| 1 | 2 |"]),
        ("see [the wiki](https://minecraft.wiki)", ["see the wiki (https://minecraft.wiki)"]),
        ("**unclosed bold", ["unclosed bold"]),
        ("**bold _and italic_**", ["<b>bold </b><b><i>and italic</i></b>"]),
    ],
)
def test_markdown_becomes_styling_or_disappears(markdown: str, lines: list[str]) -> None:
    assert list(layout_reply(markdown, LAYOUT)) == lines


def test_no_markdown_marker_is_shown_raw() -> None:
    text = "# Plan\n**Step** one: `craft`\n- *wood*\n~~old~~\n```\ncode\n```"
    for line in shown(text):
        assert not any(marker in line for marker in ("**", "`", "~~", "# ", "- *"))


@pytest.mark.parametrize(
    "tag",
    [
        "<click:run_command:'/op Steve'>x</click>",
        "<hover:show_text:'hi'>x",
        "<insert:/op>x",
        "<key:key.jump>",
        "<lang:block.minecraft.stone>",
        "<newline>",
        "<br>",
        "<selector:@a>",
        "<nbt:block:'1 2 3':Items>",
        "<score:Steve:kills>",
        "<\\click:run_command:/op>",
    ],
)
def test_model_text_can_never_write_a_tag(tag: str) -> None:
    [line] = layout_reply(f"press {tag} now", LAYOUT)
    # Every '<' in a line is either escaped or one of the bridge's own style tags.
    assert "<click" not in line.replace("\\<click", "")
    for index, char in enumerate(line):
        if char == "<" and (index == 0 or line[index - 1] != "\\"):
            raise AssertionError(f"unescaped tag in {line!r}")


def test_model_style_tags_are_dropped_not_shown() -> None:
    assert shown("Hello <green>Steve</green>! <gradient:red:blue>wow</gradient>") == [
        "Hello Steve! wow"
    ]


def test_escaping_round_trips_backslashes() -> None:
    assert plain_text(escape_minimessage("a\\<b> \\\\ c")) == "a\\<b> \\\\ c"


def test_an_answer_of_only_invisible_characters_is_an_ellipsis() -> None:
    assert layout_reply("\u200b\u3164\n\n", LAYOUT) == ("…",)


def test_the_total_length_is_capped_before_layout() -> None:
    lines = shown("y" * 500, ReplyLayout(max_chars=100, line_max_chars=60, wrap="anywhere"))
    assert "".join(lines) == "y" * 99 + "…"
