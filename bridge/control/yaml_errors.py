"""YAML parser errors reworded for someone editing a file, each with a hint to fix it.

libyaml says what its scanner met ("found character that cannot start any token"); an owner
needs to know what they wrote wrong. The wording keys on the parser's message and on the
character at the reported position; anything not recognised keeps the parser's words behind a
"YAML syntax error" prefix, so nothing is lost.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from bridge.control.yaml_indent_blame import indentation_blame

_QUOTE_HINT = "put the whole value in quotes"


@dataclass(frozen=True, slots=True)
class PlainYamlError:
    line: int | None
    column: int | None
    message: str


_INDENTATION_PROBLEMS = (
    "mapping values are not allowed",
    "did not find expected key",
    "expected <block end>",
    "did not find expected <document start>",
)


def plain_yaml_error(exc: yaml.MarkedYAMLError, text: str) -> PlainYamlError:
    """The error at the line an owner should look at, in plain words."""
    problem = str(exc.problem or exc.context or "invalid YAML")
    mark = exc.problem_mark or exc.context_mark
    if mark is not None and problem.startswith(_INDENTATION_PROBLEMS):
        blame = indentation_blame(text, mark.line + 1)
        if blame is not None:
            return PlainYamlError(blame.line, blame.column, blame.message)
    return _reworded(exc, text)


def _reworded(exc: yaml.MarkedYAMLError, text: str) -> PlainYamlError:
    problem = str(exc.problem or exc.context or "invalid YAML")
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark else None
    column = mark.column + 1 if mark else None
    char = _char_at(text, mark)
    start = exc.context_mark
    start_line = start.line + 1 if start else line
    start_column = start.column + 1 if start else column

    if problem.startswith("found character that cannot start any token"):
        if char == "\t":
            message = "a tab character: YAML indents with spaces only; replace the tab by spaces"
        elif char is not None and char in "%@`":
            message = f"a value cannot start with {char!r} unless quoted; {_QUOTE_HINT}"
        else:
            message = f"the character {char!r} cannot start a value here; {_QUOTE_HINT}"
        return PlainYamlError(line, column, message)
    if problem.startswith("found unknown escape character"):
        escape = _escape_at(text, mark)
        message = (
            f"unknown escape {escape} in a double-quoted string: inside double quotes a backslash "
            "starts an escape. For a regular expression use single quotes ('...') or write "
            "each backslash twice"
        )
        return PlainYamlError(line, column, message)
    if problem.startswith("mapping values are not allowed"):
        message = (
            "a ':' where no key can start: this line is indented differently from the key above "
            f"it, or a value holds ': ' and needs quotes ({_QUOTE_HINT})"
        )
        return PlainYamlError(line, column, message)
    if problem.startswith("did not find expected key"):
        message = (
            "this line is not indented like the keys around it; keys of one mapping start in "
            "the same column"
        )
        return PlainYamlError(line, column, message)
    if problem.startswith("could not find expected ':'"):
        message = "a line without 'key: value' (a missing ':' or a quote left open)"
        return PlainYamlError(start_line, start_column, message)
    if problem.startswith("found a tab character"):
        message = "a tab character: YAML indents with spaces only; replace the tab by spaces"
        return PlainYamlError(line, column, message)
    if problem.startswith("found unexpected end of stream"):
        message = "the file ends inside a quoted value that starts here; close the quote"
        return PlainYamlError(start_line, start_column, message)
    if problem.startswith("did not find expected ',' or"):
        closer = problem.rsplit(" ", 1)[-1]
        message = f"a list or mapping in brackets opened here is not closed with {closer}"
        return PlainYamlError(start_line, start_column, message)
    if problem.startswith("expected <block end>"):
        message = (
            "this line's indentation matches no block above it (more or less than its"
            " neighbours); check its spaces"
        )
        return PlainYamlError(line, column, message)
    return PlainYamlError(line, column, f"YAML syntax error: {problem}")


def _char_at(text: str, mark: yaml.Mark | None) -> str | None:
    if mark is None:
        return None
    lines = text.splitlines()
    if mark.line >= len(lines) or mark.column >= len(lines[mark.line]):
        return None
    return lines[mark.line][mark.column]


def _escape_at(text: str, mark: yaml.Mark | None) -> str:
    if mark is None:
        return "\\?"
    lines = text.splitlines()
    if mark.line >= len(lines):
        return "\\?"
    rest = lines[mark.line][mark.column :]
    index = rest.find("\\")
    return rest[index : index + 2] if index >= 0 else "\\?"
