"""Code points that show nothing, or nothing a reader can tell apart from a space.

``str.isprintable`` already refuses controls, format characters (bidi marks, zero-width
spaces), separators other than U+0020, surrogates and unassigned code points. It lets through
the rest of Unicode's ``Default_Ignorable_Code_Point`` set, which are letters or combining marks
by category (the Hangul fillers, U+034F, the variation selectors), and the letters and symbols
that are drawn as blank glyphs (U+2800 BRAILLE PATTERN BLANK, U+FFFC). A command or an intent
with one of them reads differently from what runs, so both refuse them all.
"""

from __future__ import annotations

from bisect import bisect_right

# Unicode 16 DerivedCoreProperties.txt, Default_Ignorable_Code_Point, as inclusive ranges.
_DEFAULT_IGNORABLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)

# Assigned, not default-ignorable, yet drawn blank or as an empty box.
BLANK_LOOKING: frozenset[int] = frozenset(
    {
        0x2800,  # BRAILLE PATTERN BLANK
        0x1D159,  # MUSICAL SYMBOL NULL NOTEHEAD
        0xFFFC,  # OBJECT REPLACEMENT CHARACTER
        0x3000,  # IDEOGRAPHIC SPACE (also refused as a separator)
        0x2001,  # EM QUAD, and the other wide spaces below (also separators)
        0x2003,
        0x205F,
    }
)

_STARTS = tuple(start for start, _ in _DEFAULT_IGNORABLE)


def is_default_ignorable(char: str) -> bool:
    code = ord(char)
    index = bisect_right(_STARTS, code) - 1
    return index >= 0 and code <= _DEFAULT_IGNORABLE[index][1]


def is_invisible(char: str) -> bool:
    """True for a default-ignorable or blank-looking code point."""
    return ord(char) in BLANK_LOOKING or is_default_ignorable(char)


def first_invisible(text: str) -> str | None:
    """The first invisible code point of ``text``, or None. Printable ASCII is skipped fast."""
    if text.isascii():
        return None
    return next((char for char in text if is_invisible(char)), None)


def describe(char: str) -> str:
    """``U+3164`` style, for messages a player reads."""
    return f"U+{ord(char):04X}"
