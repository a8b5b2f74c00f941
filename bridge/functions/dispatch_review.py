"""A static look at Functions that dispatch console commands: is the command text fixed, or
built at run time (so the model's arguments may shape what the console runs)?

Nothing runs. The source of each Function declaring ``command.dispatch.console`` is scanned for
``command:`` properties: a plain string literal (or a template without ``${``) is fixed;
anything else (a template with ``${...}``, a concatenation, a variable, a call) is built at run
time and flagged; a source that dispatches but has no readable ``command:`` property is flagged
too. A flag is a warning, not an error: such a Function may be fine, but its owner should know
that the console runs what the arguments make of it. Each call is still judged against the
never list at dispatch (``bridge.functions.live_host``), whatever this review says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bridge.control.function_capabilities import COMMAND_DISPATCH_CONSOLE
from bridge.control.functions_file import FunctionsFile

_PROPERTY = re.compile(r"""(?:(?<=[{,\s])|^)(?:command|"command"|'command')\s*:""")
_END = frozenset(",}\n;)")


@dataclass(frozen=True, slots=True)
class BuiltCommand:
    """Function ``name`` (entry ``index``) dispatches console commands built at run time."""

    index: int
    name: str
    expression: str

    def message(self) -> str:
        source = (
            "from the model's arguments (ctx.args)"
            if "args" in self.expression
            else "at run time, which may depend on the model's arguments"
        )
        return (
            f"function {self.name} dispatches console commands built {source}"
            f" ({self.expression[:60]}); each call is still judged against the never list"
            " at dispatch"
        )


def built_console_commands(catalogue: FunctionsFile) -> list[BuiltCommand]:
    """Every Function with ``command.dispatch.console`` whose command text is not fixed."""
    found: list[BuiltCommand] = []
    for index, spec in enumerate(catalogue.functions):
        if COMMAND_DISPATCH_CONSOLE not in spec.capabilities:
            continue
        dynamic = _dynamic_command(spec.on_call)
        if dynamic is not None:
            found.append(BuiltCommand(index, spec.name, dynamic))
    return found


def _dynamic_command(source: str) -> str | None:
    """The first ``command:`` value that is not a fixed string, or None when all are fixed."""
    matches = list(_PROPERTY.finditer(source))
    if not matches:
        return "no command: property the review can read" if "dispatch" in source else None
    for match in matches:
        expression, fixed = _value(source, match.end())
        if not fixed:
            return expression
    return None


def _value(source: str, start: int) -> tuple[str, bool]:
    """The expression after ``command:`` and whether it is one fixed string literal."""
    index = start
    while index < len(source) and source[index] in " \t\r\n":
        index += 1
    quote = source[index] if index < len(source) else ""
    if quote not in ("'", '"', "`"):
        end = index
        while end < len(source) and source[end] not in _END:
            end += 1
        return source[index:end].strip() or "?", False
    end = index + 1
    while end < len(source) and source[end] != quote:
        end += 2 if source[end] == "\\" else 1
    literal = source[index : end + 1]
    rest = source[end + 1 :].lstrip(" \t")
    fixed = not (quote == "`" and "${" in literal) and (not rest or rest[0] in _END)
    shown = literal if fixed else (literal + " " + rest.split("\n", 1)[0]).strip().rstrip("});,")
    return shown, fixed
