"""Warnings for environment references written in a form the bridge does not read.

Only ``${NAME}`` names an environment variable. ``$NAME`` (a shell's form) and ``%NAME%``
(Windows') are taken literally, so ``api_key: $OPENAI_API_KEY`` would send those fifteen
characters as the key; the loader warns where either form appears in ``providers.yml``.
"""

from __future__ import annotations

import re
from typing import Any

from bridge.control.problems import Problem, format_path
from bridge.control.yaml_strict import PathParts, YamlDocument

_SHELL_FORM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_WINDOWS_FORM = re.compile(r"%([A-Za-z_][A-Za-z0-9_]*)%")


def env_reference_warnings(document: YamlDocument, file: str) -> list[Problem]:
    """One warning per string value holding ``$NAME`` or ``%NAME%``, at its line."""
    warnings: list[Problem] = []
    for path, text in _strings(document.value, ()):
        found = [m.group(0) for m in _SHELL_FORM.finditer(text)]
        found += [m.group(0) for m in _WINDOWS_FORM.finditer(text)]
        for written in dict.fromkeys(found):
            name = written.strip("$%")
            line, column = document.locate(path)
            message = (
                f"{written} is not an environment reference and is used literally; "
                f"write ${{{name}}} to read the variable {name}"
            )
            warnings.append(Problem(file, line, column, format_path(path), message, warning=True))
    return warnings


def _strings(value: Any, path: PathParts) -> list[tuple[PathParts, str]]:
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        return [item for key, child in value.items() for item in _strings(child, (*path, key))]
    if isinstance(value, list):
        return [item for i, child in enumerate(value) for item in _strings(child, (*path, i))]
    return []
