"""The history book's layout: entries from archived turns (newest last, the newest 300), pages
that fit a written book (lines, parts, at most 100 pages, newest kept), MiniMessage tags never
split, a long word cut, players' words as plain values and the assistant's as model text; the
console's plain lines."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from bridge.history.book import (
    DUMP_LINES,
    LINE_CHARS,
    MAX_ENTRIES,
    MAX_PAGES,
    PAGE_LINES,
    PAGE_PARTS,
    Entry,
    book_pages,
    dump_lines,
    entries_of,
)
from bridge.link.messages import Text
from bridge.store.archive import ArchivedTurn

NOW = datetime(2026, 12, 4, tzinfo=UTC)


def turn(n: int, items: list[dict[str, Any]]) -> ArchivedTurn:
    return ArchivedTurn(
        turn_id=f"t-{n}",
        session_id="s",
        player="Steve",
        started_at=NOW,
        ended_at=NOW,
        model_ref="p/m",
        control_version="1",
        items=tuple(items),
    )


def rendered(page: Text) -> str:
    out = page.template
    for name, value in {**(page.values or {}), **(page.model or {})}.items():
        out = out.replace(f"<{name}>", value)
    return out


def estimated_lines(page: Text) -> int:
    visible = re.sub(r"<[^<>\n]*>", "", rendered(page))
    return sum(max(1, -(-len(line) // LINE_CHARS)) for line in visible.split("\n"))


def test_entries_are_the_players_lines_and_the_answers_newest_last_and_redacted() -> None:
    turns = [
        turn(
            1,
            [
                {"kind": "player", "player": "Alex", "text": "heard before"},
                {"kind": "player", "player": "Steve", "text": "my key is hunter2"},
                {"kind": "tool_call", "call_id": "c", "name": "x", "arguments": "{}"},
                {"kind": "assistant_text", "text": "<green>Hello</green> Steve"},
                {"kind": "assistant_text", "text": "   "},
            ],
        )
    ]
    entries = entries_of(turns, "Mineclaw", lambda text: text.replace("hunter2", "[redacted]"))
    assert entries == [
        Entry("Alex", "heard before", assistant=False),
        Entry("Steve", "my key is [redacted]", assistant=False),
        Entry("Mineclaw", "<green>Hello</green> Steve", assistant=True),
    ]
    many = [turn(n, [{"kind": "player", "player": "Steve", "text": f"q{n}"}]) for n in range(400)]
    kept = entries_of(many, "Mineclaw", str)
    assert len(kept) == MAX_ENTRIES and kept[-1].text == "q399" and kept[0].text == "q100"


def test_pages_fit_a_book_and_keep_the_speakers_apart_from_their_words() -> None:
    entries = [
        Entry("Steve", "<red>not a tag of mine</red> how do I tame a fox?", assistant=False),
        Entry("Mineclaw", "Use <green>sweet berries</green>, then " + "wait " * 60, True),
        Entry("Steve", "thanks", assistant=False),
    ]
    pages = book_pages(entries)
    assert len(pages) > 1
    for page in pages:
        assert estimated_lines(page) <= PAGE_LINES + 1, rendered(page)
        assert len(page.template.split("\n")) <= PAGE_PARTS
        assert len(page.values or {}) <= 16 and len(page.model or {}) <= 16
    first = pages[0]
    # The player's words are a plain value (never parsed as tags), the answer model text.
    assert any(v.startswith("<red>not a tag of mine</red>") for v in (first.values or {}).values())
    assert first.template.startswith("<dark_aqua><s0></dark_aqua>: <w0>")
    assert any("sweet berries" in value for value in (first.model or {}).values())
    assert rendered(pages[-1]).endswith("Steve: thanks".replace("Steve: ", ""))
    whole = "".join(rendered(page) for page in pages)
    assert whole.count("<green>") == whole.count("</green>") == 1  # a tag is never cut


def test_a_long_word_is_cut_and_only_the_newest_pages_are_kept() -> None:
    link = "https://example.invalid/" + "x" * 600
    pages = book_pages([Entry("Mineclaw", link, assistant=True)])
    for page in pages:
        assert estimated_lines(page) <= PAGE_LINES + 1
    assert "".join("".join((p.model or {}).values()) for p in pages).replace(" ", "") == link
    many = [Entry("Steve", f"line {n} " + "word " * 40, assistant=False) for n in range(300)]
    kept = book_pages(many)
    assert len(kept) == MAX_PAGES
    assert "line 299" in "".join(rendered(page) for page in kept[-3:])
    assert "line 0 " not in "".join(rendered(page) for page in kept)


def test_the_console_gets_plain_lines_tags_removed_and_bounded() -> None:
    lines = dump_lines([Entry("Mineclaw", "<green>Hi</green>  there", True)])
    assert lines == ["Mineclaw: Hi there"]
    many = dump_lines([Entry("Steve", f"q{n}", assistant=False) for n in range(100)])
    assert len(many) == DUMP_LINES
    assert many[0] == "... 41 earlier entries" and many[-1] == "Steve: q99"


def test_an_answer_cannot_write_a_speaker_its_tags_are_shown_as_written() -> None:
    forged = "sure\n<dark_aqua>Steve</dark_aqua>: <b>give me op</b> \\<i> <reset>"
    pages = book_pages([Entry("Steve", "hi", False), Entry("Mineclaw", forged, True)])
    [page] = pages
    model = "".join((page.model or {}).values())
    # Every "<" of the answer is escaped: the plugin renders it as a character, never a tag.
    assert re.search(r"(?<!\\)<", model.replace("\\\\", "")) is None
    assert model.replace("\\<", "<").replace("\\\\", "\\") == forged
    # Only the bridge's template names speakers, in its colours.
    assert page.template.count("<dark_aqua>") == 1 and page.values == {
        "s0": "Steve",
        "w0": "hi",
        "s1": "Mineclaw",
    }


def test_a_cut_never_parts_a_backslash_from_what_it_escapes() -> None:
    text = "<" * 400
    for page in book_pages([Entry("Mineclaw", text, True)]):
        for value in (page.model or {}).values():
            assert re.fullmatch(r"(\\<)+", value), value
