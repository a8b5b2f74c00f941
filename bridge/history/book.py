"""A conversation laid out as written-book pages (``output.book``) or plain lines.

An entry is one player line or one answer of the assistant, oldest first, newest last, at most
`MAX_ENTRIES` (the newest). A page holds what a written book shows: about `PAGE_LINES` lines of
`LINE_CHARS` characters; the layout estimates each word's width in characters. Each page is a
Text: the template is the bridge's (speaker names in colour), a player's words go in as plain
values and the assistant's as model text escaped whole (`escaped`), so the plugin renders every
character of it and no tag: only the bridge writes a speaker's name and colour (an answer with
style tags could otherwise forge a "Steve:" entry). Past `MAX_PAGES` pages the oldest pages are
left out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bridge.link.messages import Text
from bridge.store.archive import ArchivedTurn

MAX_ENTRIES = 300
MAX_PAGES = 100
PAGE_LINES = 14
LINE_CHARS = 19
PAGE_PARTS = 8
"""Entries (or pieces of one) per page: a Text carries at most 16 plain values, two each."""
DUMP_LINES = 60
"""Lines of a console dump (a command reply carries at most 64)."""
DUMP_ENTRY_CHARS = 400

_TOKEN = re.compile(r"\n|[^\s]+|[ \t]+")
_TAG = re.compile(r"<[^<>\n]*>")


def escaped(text: str) -> str:
    """``text`` as MiniMessage that renders exactly ``text`` (the plugin's model-text set):
    no tag can start in it."""
    return text.replace("\\", "\\\\").replace("<", "\\<")


@dataclass(frozen=True, slots=True)
class Entry:
    speaker: str
    text: str
    assistant: bool


def entries_of(
    turns: Sequence[ArchivedTurn], assistant: str, redact: Callable[[str], str]
) -> list[Entry]:
    """The players' lines and the assistant's answers of ``turns``, the newest `MAX_ENTRIES`."""
    entries: list[Entry] = []
    for turn in turns:
        for item in turn.items:
            if not isinstance(item, dict):
                continue
            text = item.get("text")
            if not isinstance(text, str) or not text.strip():
                continue
            if item.get("kind") == "player":
                speaker = item.get("player")
                name = speaker if isinstance(speaker, str) and speaker else turn.player
                entries.append(Entry(name, redact(text.strip()), assistant=False))
            elif item.get("kind") == "assistant_text":
                entries.append(Entry(assistant, redact(text.strip()), assistant=True))
    return entries[-MAX_ENTRIES:]


@dataclass(slots=True)
class _Page:
    parts: list[str]
    values: dict[str, str]
    model: dict[str, str]
    lines: int = 0

    def text(self) -> Text:
        fields: dict[str, object] = {"template": "\n".join(self.parts)}
        if self.values:
            fields["values"] = self.values
        if self.model:
            fields["model"] = self.model
        return Text.model_validate(fields)


def book_pages(entries: Sequence[Entry]) -> list[Text]:
    """``entries`` as pages, newest last; the newest `MAX_PAGES` when there are more."""
    pages: list[_Page] = [_Page([], {}, {})]
    for entry in entries:
        first = True
        for chunk, lines in _chunks(entry, room=PAGE_LINES - pages[-1].lines):
            page = pages[-1]
            if (page.lines + lines > PAGE_LINES or len(page.parts) >= PAGE_PARTS) and page.parts:
                page = _Page([], {}, {})
                pages.append(page)
            _add(page, entry, chunk, first)
            page.lines += lines
            first = False
    kept = [page for page in pages if page.parts][-MAX_PAGES:]
    return [page.text() for page in kept]


def _add(page: _Page, entry: Entry, chunk: str, first: bool) -> None:
    n = len(page.parts)
    words = f"m{n}" if entry.assistant else f"w{n}"
    if entry.assistant:
        # Escaped piece by piece, after the cut: a cut never parts a backslash from its "<".
        page.model[words] = escaped(chunk)
    else:
        page.values[words] = chunk
    if not first:
        page.parts.append(f"<{words}>")
        return
    page.values[f"s{n}"] = entry.speaker
    colour = "dark_purple" if entry.assistant else "dark_aqua"
    page.parts.append(f"<{colour}><s{n}></{colour}>: <{words}>")


def _chunks(entry: Entry, room: int) -> list[tuple[str, int]]:
    """The entry's text cut into pieces that fit a page (the first into ``room`` lines, the
    rest into whole pages), each with the lines it takes."""
    pieces: list[tuple[str, int]] = []
    column = len(entry.speaker) + 2  # "Name: " starts the first line
    lines = 1
    limit = max(1, room)
    current: list[str] = []
    for token in _tokens(entry.text):
        if token == "\n":
            width_lines, column = 1, 0
        else:
            width = len(token)
            if column + width <= LINE_CHARS or token.isspace():
                column += width
                width_lines = 0
            else:
                width_lines = math.ceil(width / LINE_CHARS)
                column = width - (width_lines - 1) * LINE_CHARS
        if lines + width_lines > limit and "".join(current).strip():
            pieces.append(("".join(current).strip(), lines))
            current, lines, limit = [], 1, PAGE_LINES
            column = 0 if token.isspace() else min(len(token), LINE_CHARS)
            width_lines = 0
        lines += width_lines
        current.append(token)
    if "".join(current).strip():
        pieces.append(("".join(current).strip(), lines))
    return pieces


def _tokens(text: str) -> list[str]:
    """Line breaks, runs of spaces and words; a word longer than a line is cut into line-long
    pieces (joined again without a gap), so a long link cannot overflow a page."""
    tokens: list[str] = []
    for token in _TOKEN.findall(text):
        if len(token) > LINE_CHARS and not token.isspace():
            tokens.extend(token[i : i + LINE_CHARS] for i in range(0, len(token), LINE_CHARS))
        else:
            tokens.append(token)
    return tokens


def dump_lines(entries: Sequence[Entry]) -> list[str]:
    """The newest entries as plain lines for the console, tags removed, at most `DUMP_LINES`
    (the first says how many older entries were left out)."""
    lines = []
    for entry in entries:
        plain = " ".join(_TAG.sub("", entry.text).split()) if entry.assistant else entry.text
        plain = " ".join(plain.split())
        if len(plain) > DUMP_ENTRY_CHARS:
            plain = plain[: DUMP_ENTRY_CHARS - 1] + "…"
        lines.append(f"{entry.speaker}: {plain}")
    if len(lines) > DUMP_LINES:
        left_out = len(lines) - (DUMP_LINES - 1)
        lines = [f"... {left_out} earlier entries", *lines[-(DUMP_LINES - 1) :]]
    return lines
