"""Model text made safe to show: one kind of line break, no hidden characters, no markup.

The model's text reaches public chat only through the bridge's own layout
(`bridge.turns.reply_layout`) and the action bar. Before either, ``neutralise`` turns every
line-breaking character (CR, VT, FF, the information separators, NEL, U+2028, U+2029) into
``\\n``, tabs and other spaces into a plain space, and drops control, format, private-use,
default-ignorable and blank-looking characters, and legacy ``§``/``&`` colour codes, which
clients and chat plugins still honour. ``escape_minimessage`` then makes the text inert for the
plugin's MiniMessage parser: a model can never write a tag, only the bridge does.
"""

from __future__ import annotations

import re
import unicodedata

from bridge.policy.invisible import is_invisible

LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
"""Every character that a terminal, a log viewer or a chat client may start a new line at."""

# `§` with its code character; runs of `&` codes only where they start a word ("Q&A" and
# "AT&T" stay, "&aHello" and "&x&f&f&f&f&f&f" go).
_SECTION_CODES = re.compile(r"§[0-9a-fk-orx]?", re.IGNORECASE)
_AMPERSAND_CODES = re.compile(
    r"(?<![0-9A-Za-z])(?:&(?:#[0-9a-f]{6}|[0-9a-fk-orx]))+", re.IGNORECASE
)

_STYLE_NAMES = (
    "black|dark_blue|dark_green|dark_aqua|dark_red|dark_purple|gold|gray|grey|dark_gray|"
    "dark_grey|blue|green|aqua|red|light_purple|yellow|white|color|colour|c|gradient|rainbow|"
    "transition|reset|bold|b|italic|em|i|underlined|u|strikethrough|st|obfuscated|obf|"
    "#[0-9a-f]{6}"
)
# The style tags the plugin's restricted renderer used to resolve in model text: models were
# told they could colour their answers, so such tags are dropped rather than shown raw.
_STYLE_TAG = re.compile(rf"</?(?:{_STYLE_NAMES})(?::[^<>\n]*)?>", re.IGNORECASE)


def neutralise(text: str) -> str:
    """``text`` with ``\\n`` as its only line break and nothing invisible or legacy-coded."""
    text = text.replace("\r\n", "\n")
    out: list[str] = []
    for char in text:
        if char.isprintable() and not char.isascii() and is_invisible(char):
            continue
        if char.isprintable():
            out.append(char)
        elif char in LINE_BREAKS:
            out.append("\n")
        elif char == "\t" or unicodedata.category(char) == "Zs":
            out.append(" ")
        # everything else (controls, format, private use, surrogates, unassigned) is dropped
    cleaned = "".join(out)
    if "§" in cleaned or "&" in cleaned:
        # `§` codes first: "§c&4Red" is two codes, and the `&` one starts a word only once the
        # `§` one is gone.
        cleaned = _AMPERSAND_CODES.sub("", _SECTION_CODES.sub("", cleaned))
    return cleaned


def escape_line_breaks(text: str) -> str:
    """``text`` on one line: each line-breaking or other control character written as a visible
    ``\\uXXXX`` escape, so text built into a transcript line can never start a line of its
    own (``hi\u2028[player Notch] ...`` stays on the line of the player who typed it)."""
    if text.isprintable():
        return text
    return "".join(
        char if char.isprintable() or char == " " else f"\\u{ord(char):04x}" for char in text
    )


def strip_style_tags(text: str) -> str:
    """Drop the colour and decoration tags a model may still write out of habit."""
    return _STYLE_TAG.sub("", text) if "<" in text else text


def escape_minimessage(text: str) -> str:
    """``text`` as MiniMessage that renders exactly ``text``: no tag can start in it."""
    return text.replace("\\", "\\\\").replace("<", "\\<")


def one_line(text: str) -> str:
    """Neutralised model text on a single line (for the action bar), tags dropped."""
    return " ".join(strip_style_tags(neutralise(text)).split())
