"""Syntax check of a Function source in the engine the runtime uses, without running any of it.

The runtime evaluates ``on_call`` as a classic script in V8 (mini-racer), so the check compiles it
the same way, with the same V8 flags. Nothing of the source may run, so the script handed to V8
starts with a ``throw`` of a marker: V8 parses and compiles the whole script first (a syntax error
surfaces then), and execution stops at the first statement, before any owner code. Hoisted
declarations only create bindings, so even a source written to escape a wrapper cannot act.
Each source gets a fresh isolate: the bindings one script declares must not clash with the next.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MARKER = "mineclaw:compiled-not-run"
# V8 reports "<anonymous>:LINE: SyntaxError: message", then the line and a caret under the fault.
_HEADER = re.compile(r"<anonymous>:(\d+): (?:SyntaxError: )?(.*)")


@dataclass(frozen=True, slots=True)
class SourceSyntaxError:
    """Where a source fails to parse: 1-based line and column inside the source, V8's message."""

    line: int
    column: int | None
    message: str


def check_syntax(source: str) -> SourceSyntaxError | None:
    """``None`` when ``source`` compiles as the runtime's script would; otherwise the error."""
    # V8 loads here, in the short-lived checking child (syntax_child), never in the bridge,
    # which imports this module only for SourceSyntaxError.
    from py_mini_racer import JSEvalException, JSParseException, MiniRacer, init_mini_racer

    from bridge.functions.v8_engine import V8_FLAGS

    init_mini_racer(flags=V8_FLAGS, ignore_duplicate_init=True)
    racer = MiniRacer()
    try:
        # The runtime appends its start call after a newline and ";" (see invocation.py); the
        # same tail here makes an unterminated construct fail alike in both places.
        racer.eval(f'throw "{_MARKER}";\n{source}\n;')
    except JSParseException as exc:
        return _parse_error(str(exc), source)
    except JSEvalException as exc:
        if _MARKER in str(exc):
            return None
        return _parse_error(str(exc), source)
    finally:
        racer.close()
    return SourceSyntaxError(1, None, "the syntax check did not stop where it should")


def _parse_error(text: str, source: str) -> SourceSyntaxError:
    lines = text.splitlines()
    match = _HEADER.match(lines[0]) if lines else None
    if match is None:  # the parser itself gave up, e.g. nesting too deep for its stack
        first = re.sub(r"^\S*:\d+: ", "", lines[0] if lines else "no reason given")
        return SourceSyntaxError(1, None, f"the engine cannot parse this source: {first[:300]}")
    source_lines = max(source.count("\n") + 1, 1)
    line = int(match.group(1)) - 1  # the marker line comes first
    column = None
    if len(lines) >= 3 and "^" in lines[2]:
        column = lines[2].index("^") + 1
    if line > source_lines or line < 1:  # "unexpected end of input" points past the source
        line, column = source_lines, None
    return SourceSyntaxError(line, column, match.group(2).strip()[:300])
