"""Syntax errors of the Function sources in ``functions.yml``, each at its line in that file.

The folder's one verdict (``bridge.app.serving.folder_verdict``: ``validate``, ``functions
validate``, ``serve`` and reload) uses this; nothing runs (see ``bridge.functions.syntax``), and
the check itself runs in a child process (``bridge.functions.syntax_child``).
The file is read on its own, so a syntax error is reported even while other fields of the same
file, or other files, have problems. An error in an enabled Function is an error; in a disabled
one it is a warning, since nothing calls it until the owner enables it.
"""

from __future__ import annotations

from pathlib import Path

from bridge.control.files import read_regular_file
from bridge.control.layout import FUNCTIONS_FILE, MAX_YAML_BYTES, default_bytes
from bridge.control.problems import ConfigLoadError, Problem, format_path
from bridge.control.yaml_strict import load_strict_yaml
from bridge.functions.syntax_child import SyntaxCheckFailed, syntax_errors


def function_syntax_problems(directory: Path) -> list[Problem]:
    """One problem per Function whose ``on_call`` does not compile (empty if unreadable: the
    loader reports why)."""
    try:
        data = read_regular_file(
            directory / FUNCTIONS_FILE,
            label=FUNCTIONS_FILE,
            max_bytes=MAX_YAML_BYTES[FUNCTIONS_FILE],
        )
        if data is None:
            data = default_bytes(FUNCTIONS_FILE)
        document = load_strict_yaml(data, FUNCTIONS_FILE, max_bytes=MAX_YAML_BYTES[FUNCTIONS_FILE])
    except ConfigLoadError:
        return []
    entries = document.value.get("functions") if isinstance(document.value, dict) else None
    if not isinstance(entries, list):
        return []
    text_lines = data.decode("utf-8", errors="replace").splitlines()
    checked = [
        (index, entry)
        for index, entry in enumerate(entries)
        if isinstance(entry, dict) and isinstance(entry.get("on_call"), str)
    ]
    try:
        errors = syntax_errors([entry["on_call"] for _, entry in checked])
    except SyntaxCheckFailed as exc:
        return [Problem(FUNCTIONS_FILE, None, None, "functions", str(exc))]
    problems: list[Problem] = []
    for (index, entry), error in zip(checked, errors, strict=True):
        if error is None:
            continue
        parts = ("functions", index, "on_call")
        key_line, _ = document.locate(parts)
        line = key_line
        if key_line is not None and _is_block_scalar(text_lines, key_line):
            # A literal block keeps the source's lines one for one, from the line after the key.
            line = key_line + error.line
        name = entry.get("name")
        owner = f"function {name!r}" if isinstance(name, str) else "function"
        where = f"line {error.line}" + (f", column {error.column}" if error.column else "")
        enabled = entry.get("enabled") is not False
        message = (
            f"{owner}, on_call: JavaScript syntax error at {where} of the source: {error.message}"
        )
        if not enabled:
            message += " (the Function is disabled; fix this before enabling it)"
        problems.append(
            Problem(FUNCTIONS_FILE, line, None, format_path(parts), message, warning=not enabled)
        )
    return problems


def _is_block_scalar(lines: list[str], key_line: int) -> bool:
    if key_line > len(lines):
        return False
    after = lines[key_line - 1].split("on_call:", 1)
    return len(after) == 2 and after[1].lstrip()[:1] in ("|", ">")
