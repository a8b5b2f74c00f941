"""Which line an indentation mistake is on. libyaml reports where the structure broke, which
is often the line after the mistake: a key moved left becomes a valid key of the outer mapping,
and the parser only stops at the next line, still indented as the block was. Looking at the
lines before the reported one tells the two apart; when nothing points elsewhere, the reported
line stands."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A key whose value is the block below it (`chat:`, `- tools:`), a comment allowed after.
_OPENER = re.compile(r"^\s*(?:-\s+)?[^\s#][^#]*:\s*(?:#.*)?$")
# A key whose value is a literal or folded block (`description: >-`): the lines below it that
# are indented more are text, not YAML structure.
_BLOCK_SCALAR = re.compile(r"^[^#]*:\s*[|>][-+0-9]*\s*(?:#.*)?$")


@dataclass(frozen=True, slots=True)
class Blame:
    line: int
    column: int
    message: str


@dataclass(frozen=True, slots=True)
class _Line:
    number: int
    indent: int
    opener: bool


def _scalar_lines(lines: list[str]) -> frozenset[int]:
    """The indexes of the lines inside block scalars."""
    inside: set[int] = set()
    opened_at: int | None = None
    for index, text in enumerate(lines):
        stripped = text.lstrip(" ")
        indent = len(text) - len(stripped)
        if opened_at is not None and (not stripped or indent > opened_at):
            inside.add(index)
            continue
        opened_at = indent if _BLOCK_SCALAR.match(text) else None
    return frozenset(inside)


def _content(lines: list[str], index: int, text_lines: frozenset[int]) -> _Line | None:
    if index in text_lines:
        return None
    text = lines[index]
    stripped = text.lstrip(" ")
    if not stripped or stripped.startswith("#"):
        return None
    return _Line(index + 1, len(text) - len(stripped), bool(_OPENER.match(text)))


def _nearest(
    lines: list[str], indexes: range, count: int, text_lines: frozenset[int]
) -> list[_Line]:
    """The first ``count`` lines holding YAML among ``indexes`` (0-based), in that order."""
    found: list[_Line] = []
    for index in indexes:
        line = _content(lines, index, text_lines)
        if line is not None:
            found.append(line)
            if len(found) == count:
                break
    return found


def indentation_blame(text: str, line: int) -> Blame | None:
    """The line to blame instead of the reported ``line`` (1-based), or None to keep it.

    A line just before the reported one is blamed only when it alone is out of step: the
    reported line and the one after it agree, and the lines before the culprit fit them."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return None
    text_lines = _scalar_lines(lines)
    reported = _content(lines, line - 1, text_lines)
    if reported is None:
        return None
    previous = _nearest(lines, range(line - 2, -1, -1), 2, text_lines)
    after = _nearest(lines, range(line, len(lines)), 1, text_lines)
    if len(previous) == 1:  # the file's first line, indented unlike the top-level key here
        culprit = previous[0]
        return _blame(culprit, "more", reported) if culprit.indent > reported.indent else None
    # Two lines agreeing against one: without a line after the reported one, nothing says which
    # of the two is out of step.
    if not previous or not after or after[0].indent != reported.indent:
        return None
    culprit = previous[0]
    before = previous[1]
    if culprit.indent < reported.indent and not culprit.opener:
        # Moved left, out of the block: the line before it is the reported line's sibling, or
        # the key of the block the moved line left.
        if before.indent == reported.indent or (
            before.opener and culprit.indent <= before.indent < reported.indent
        ):
            return _blame(culprit, "less", reported)
        return None
    if culprit.indent > reported.indent and before.opener and before.indent < reported.indent:
        return _blame(culprit, "more", reported)  # the block's first line, unlike the rest
    return None


def _blame(culprit: _Line, how: str, reported: _Line) -> Blame:
    return Blame(
        culprit.number,
        culprit.indent + 1,
        f"this line is indented {how} than the lines around it (they start in column"
        f" {reported.indent + 1})",
    )
