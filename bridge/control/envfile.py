"""The ``.env`` file: ``NAME=value`` lines for secrets kept out of the YAML files.

Accepted: blank lines, ``#`` comments, an optional ``export`` prefix, unquoted values (a
`` #`` starts a trailing comment), single quotes (taken literally) and double quotes (with
``\\n``, ``\\t``, ``\\"`` and ``\\\\`` escapes). No interpolation: ``$OTHER`` stays as written.
Values are secrets, so no problem ever quotes one.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from bridge.control.files import read_regular_file
from bridge.control.problems import ConfigLoadError, Problem
from bridge.unicode_text import plain_lines

ENV_FILE = ".env"
MAX_ENV_BYTES = 64 * 1024

_LINE = re.compile(r"(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*(.*)")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def read_env_file(directory: Path) -> dict[str, str]:
    """The variables of ``directory/.env`` (empty when it does not exist)."""
    data = read_regular_file(directory / ENV_FILE, label=ENV_FILE, max_bytes=MAX_ENV_BYTES)
    return {} if data is None else parse_env(data)


def env_file_exposure(directory: Path) -> str | None:
    """Why ``.env`` is readable by other users (group or others may read it), or ``None``."""
    try:
        info = os.lstat(directory / ENV_FILE)
    except OSError:
        return None  # missing or unreadable: the reader reports what matters
    if not stat.S_ISREG(info.st_mode) or not info.st_mode & 0o044:
        return None
    mode = stat.S_IMODE(info.st_mode)
    return (
        f"readable by other users of this machine (mode {mode:o}); it holds secrets: "
        f"run chmod 600 {directory / ENV_FILE}"
    )


def parse_env(data: bytes) -> dict[str, str]:
    """Parse ``.env`` content; ``ConfigLoadError`` lists every bad line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad_line = data[: exc.start].count(b"\n") + 1
        problem = Problem(ENV_FILE, bad_line, None, "", "not valid UTF-8")
        raise ConfigLoadError([problem]) from None
    text = plain_lines(text)
    values: dict[str, str] = {}
    defined_at: dict[str, int] = {}
    problems: list[Problem] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            problems.append(Problem(ENV_FILE, number, None, "", "expected NAME=value"))
            continue
        name, rest = match.groups()
        try:
            value = _value(rest)
        except ValueError as exc:
            problems.append(Problem(ENV_FILE, number, None, name, str(exc)))
            continue
        if values.get(name):
            first = defined_at[name]
            message = f"defined more than once (line {first} also sets it); keep one of them"
            problems.append(Problem(ENV_FILE, number, None, name, message))
            continue
        # An empty earlier line is a placeholder (older `init` wrote `OPENAI_API_KEY=`): a value
        # appended below it fills it rather than clashing with it.
        values[name] = value
        defined_at[name] = number
    if problems:
        raise ConfigLoadError(problems)
    return values


def _value(rest: str) -> str:
    if rest.startswith("'"):
        end = rest.find("'", 1)
        if end < 0:
            raise ValueError("unterminated single quote")
        _only_comment_after(rest[end + 1 :])
        return rest[1:end]
    if rest.startswith('"'):
        out: list[str] = []
        index = 1
        while index < len(rest):
            char = rest[index]
            if char == "\\" and index + 1 < len(rest):
                escaped = rest[index + 1]
                if escaped not in _ESCAPES:
                    raise ValueError(f"unknown escape \\{escaped} in double quotes")
                out.append(_ESCAPES[escaped])
                index += 2
                continue
            if char == '"':
                _only_comment_after(rest[index + 1 :])
                return "".join(out)
            out.append(char)
            index += 1
        raise ValueError("unterminated double quote")
    value = re.split(r"[ \t]#", rest, maxsplit=1)[0].strip()
    if any(ch in value for ch in "\"'"):
        raise ValueError("quotes inside an unquoted value; quote the whole value")
    return value


def _only_comment_after(tail: str) -> None:
    tail = tail.strip()
    if tail and not tail.startswith("#"):
        raise ValueError("unexpected text after the closing quote")
