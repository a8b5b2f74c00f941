"""Located configuration problems and the error that carries all of them.

A load never stops at the first fault: every problem found in every file is collected so a
server owner fixes them in one pass. A problem names the file, the 1-based line and column when
known, and the dotted field path inside the file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bridge.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Problem:
    """One fault in one control-plane file; ``message`` never contains a secret value."""

    file: str
    line: int | None
    column: int | None
    path: str
    message: str
    warning: bool = False

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        field = f" {self.path}:" if self.path else ""
        kind = " warning:" if self.warning else ""
        return f"{where}:{kind}{field} {self.message}"


class ConfigLoadError(ConfigError):
    """The control plane did not load; ``problems`` lists every fault found, in file order."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        count = len(self.problems)
        lines = "\n".join(f"  {problem}" for problem in self.problems)
        super().__init__(f"{count} configuration problem{'s' if count != 1 else ''}:\n{lines}")


def format_path(parts: Iterable[str | int]) -> str:
    """Render a field path the way an owner reads YAML: ``providers.openai.retry.max_attempts``,
    with list indexes in brackets."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text
