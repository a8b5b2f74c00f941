"""The bridge lays out a reply as a few chat lines of its own making.

Each line is sent as its own chat message inside the ``reply.layout`` template, so every line
carries the reply prefix: whatever the model writes, no line of it can stand alone and pass for
another player (``<Notch> ...``) or the server (``[Server] ...``). The model's text is first
neutralised (`bridge.turns.model_text`), then the Markdown models commonly write is turned into
styling (bold, italics, strikethrough, inline code and code blocks in gray, headings in bold,
list bullets as ``•``) or dropped (rules, fences, table separators), runs of spaces collapse to
one, and the result is wrapped at ``chat.reply_line_max_chars`` visible characters, at most
``chat.reply_max_lines`` lines, the last ending in ``…`` when the reply was longer. Each line
is MiniMessage the bridge wrote: model text in it is escaped, every tag is the bridge's and is
closed on the same line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bridge.turns.model_text import escape_minimessage, neutralise, strip_style_tags

ELLIPSIS = "…"
Wrap = Literal["words", "anywhere"]

BOLD, ITALIC, STRIKE, CODE, QUOTE = "b", "i", "st", "code", "quote"
Style = frozenset[str]
Run = tuple[str, Style]
_PLAIN: Style = frozenset()

# Opening and closing MiniMessage for each style, outermost first.
_TAGS: tuple[tuple[str, str, str], ...] = (
    (CODE, "<gray>", "</gray>"),
    (QUOTE, "<gray><i>", "</i></gray>"),
    (BOLD, "<b>", "</b>"),
    (ITALIC, "<i>", "</i>"),
    (STRIKE, "<st>", "</st>"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyLayout:
    """``chat.reply_*`` from ``config.yml``; defaults match its defaults."""

    max_chars: int = 1000
    line_max_chars: int = 60
    max_lines: int = 8
    wrap: Wrap = "words"


_FENCE = re.compile(r"\s*(```|~~~)")
_RULE = re.compile(r"\s*([-*_])(\s*\1){2,}\s*")
_TABLE_RULE = re.compile(r"\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*")
_HEADING = re.compile(r"\s*#{1,6}\s+(.*?)\s*#*\s*")
_QUOTE = re.compile(r"\s*>\s?(.*)")
_BULLET = re.compile(r"\s*[-*+]\s+(.*)")
_NUMBERED = re.compile(r"\s*(\d{1,3})[.)]\s+(.*)")
_INLINE = re.compile(
    r"`(?P<code>[^`]+)`"
    r"|\*\*(?=\S)(?P<bold>.+?)(?<=\S)\*\*"
    r"|__(?=\S)(?P<bold2>.+?)(?<=\S)__"
    r"|~~(?=\S)(?P<strike>.+?)(?<=\S)~~"
    r"|\*(?=[^\s*])(?P<italic>.+?)(?<=[^\s*])\*"
    r"|(?<![0-9A-Za-z_])_(?=[^\s_])(?P<italic2>.+?)(?<=[^\s_])_(?![0-9A-Za-z_])"
    r"|\[(?P<label>[^\]]+)\]\((?P<url>[^)\s]+)\)"
)
# Markers left over after pairing (an unclosed ``**``, a lone backtick) are not shown raw.
_STRAY_MARKERS = re.compile(r"\*\*|__|~~|`")


def layout_reply(text: str, layout: ReplyLayout) -> tuple[str, ...]:
    """The chat lines (MiniMessage, the bridge's own) for the model's reply ``text``."""
    clean = neutralise(text)
    if len(clean) > layout.max_chars:
        clean = clean[: layout.max_chars - len(ELLIPSIS)].rstrip() + ELLIPSIS
    lines: list[list[Run]] = []
    for block in markdown_blocks(clean):
        lines.extend(wrap_runs(block, layout.line_max_chars, layout.wrap))
        if len(lines) > layout.max_lines:
            break
    if not lines:
        return (ELLIPSIS,)
    if len(lines) > layout.max_lines:
        lines = lines[: layout.max_lines]
        lines[-1] = _with_ellipsis(lines[-1], layout.line_max_chars)
    return tuple(render_line(line) for line in lines)


def markdown_blocks(text: str) -> list[list[Run]]:
    """One list of styled runs per visible source line; blank lines and rules dropped."""
    blocks: list[list[Run]] = []
    in_code = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_code = not in_code
            continue
        body = _collapse(line)
        if not body:
            continue
        if in_code:
            blocks.append([(body, frozenset({CODE}))])
        elif _RULE.fullmatch(line) or ("|" in line and _TABLE_RULE.fullmatch(line)):
            continue
        elif match := _HEADING.fullmatch(line):
            blocks.append(inline_runs(match[1], frozenset({BOLD})))
        elif match := _QUOTE.fullmatch(line):
            blocks.append(inline_runs(match[1], frozenset({QUOTE})))
        elif match := _BULLET.fullmatch(line):
            blocks.append([("• ", _PLAIN), *inline_runs(match[1], _PLAIN)])
        elif match := _NUMBERED.fullmatch(line):
            blocks.append([(f"{match[1]}. ", _PLAIN), *inline_runs(match[2], _PLAIN)])
        else:
            blocks.append(inline_runs(body, _PLAIN))
    return [block for block in blocks if any(text.strip() for text, _ in block)]


def inline_runs(text: str, style: Style) -> list[Run]:
    """``text`` split into runs at inline Markdown (code, bold, italics, strikethrough, links)."""
    runs: list[Run] = []
    position = 0
    for match in _INLINE.finditer(text):
        _plain(runs, text[position : match.start()], style)
        position = match.end()
        if match["code"] is not None:
            runs.append((_collapse(match["code"]), style | {CODE}))
        elif match["label"] is not None:
            runs += inline_runs(match["label"], style)
            runs.append((f" ({match['url']})", style))
        else:
            kind = next(name for name, value in match.groupdict().items() if value is not None)
            added = {"bold": BOLD, "bold2": BOLD, "strike": STRIKE}.get(kind, ITALIC)
            runs += inline_runs(match[kind], style | {added})
    _plain(runs, text[position:], style)
    return [run for run in runs if run[0]]


def _plain(runs: list[Run], text: str, style: Style) -> None:
    if text:
        # Style tags are dropped only outside code, where a model may quote them on purpose.
        shown = strip_style_tags(_STRAY_MARKERS.sub("", text))
        runs.append((_collapse(shown, strip=False), style))


def _collapse(text: str, *, strip: bool = True) -> str:
    # Runs of spaces would let a model pad a line so that the client wraps it and a forged
    # speaker starts a row of its own.
    collapsed = re.sub(r" {2,}", " ", text)
    return collapsed.strip() if strip else collapsed


def wrap_runs(runs: list[Run], width: int, wrap: Wrap) -> list[list[Run]]:
    """``runs`` cut into lines of at most ``width`` visible characters."""
    lines: list[list[Run]] = []
    current: list[Run] = []
    used = 0

    def flush() -> None:
        nonlocal current, used
        while current and current[-1][0].endswith(" "):
            text, style = current.pop()
            if text.rstrip():
                current.append((text.rstrip(), style))
        if current:
            lines.append(current)
        current, used = [], 0

    for text, style in runs:
        for piece in re.split(r"( )", text):
            if not piece:
                continue
            if piece == " ":
                if used == 0:
                    continue
                if used + 1 > width:
                    flush()
                    continue
                current.append((piece, style))
                used += 1
                continue
            while piece:
                room = width - used
                if len(piece) <= room:
                    current.append((piece, style))
                    used += len(piece)
                    break
                if wrap == "words" and used > 0 and len(piece) <= width:
                    flush()
                    continue
                if room <= 0:
                    flush()
                    continue
                current.append((piece[:room], style))
                piece = piece[room:]
                flush()
    flush()
    return lines


def _with_ellipsis(line: list[Run], width: int) -> list[Run]:
    text_len = sum(len(text) for text, _ in line)
    overflow = text_len + len(ELLIPSIS) - width
    runs = list(line)
    while overflow > 0 and runs:
        text, style = runs.pop()
        if len(text) > overflow:
            runs.append((text[: len(text) - overflow], style))
        overflow -= len(text)
    last_style = runs[-1][1] if runs else _PLAIN
    if runs:
        runs[-1] = (runs[-1][0].rstrip(), last_style)
    return [*runs, (ELLIPSIS, last_style)]


def render_line(line: list[Run]) -> str:
    """One line as MiniMessage: escaped text, each style's tags opened and closed around it."""
    merged: list[Run] = []
    for text, style in line:
        if merged and merged[-1][1] == style:
            merged[-1] = (merged[-1][0] + text, style)
        else:
            merged.append((text, style))
    out: list[str] = []
    for text, style in merged:
        opening = "".join(tag for name, tag, _ in _TAGS if name in style)
        closing = "".join(tag for name, _, tag in reversed(_TAGS) if name in style)
        out.append(opening + escape_minimessage(text) + closing)
    return "".join(out)


def plain_text(line: str) -> str:
    """What a reader sees of one rendered line (the bridge's tags out, escapes undone)."""
    out: list[str] = []
    index = 0
    while index < len(line):
        char = line[index]
        if char == "\\" and line[index + 1 : index + 2] in ("\\", "<"):
            out.append(line[index + 1])
            index += 2
        elif char == "<":
            index = line.index(">", index) + 1
        else:
            out.append(char)
            index += 1
    return "".join(out)
