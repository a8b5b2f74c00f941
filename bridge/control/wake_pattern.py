"""The one check of ``chat.wake_pattern``, used by the ``config.yml`` model (so ``validate``,
``serve`` and every reload read the same verdict) and by the wake rules that run it.

The pattern is RE2, matched anchored at the start of a message (``bridge.turns.wake``). One that
matches an empty message matches the start of every message, so every line would wake the agent.
"""

from __future__ import annotations

from typing import Any

import re2

from bridge.regex_errors import re2_error_text


def compile_wake_pattern(pattern: str) -> Any:
    """The compiled pattern, or ``ValueError`` saying in an owner's words what is wrong."""
    try:
        compiled = re2.compile(pattern)
    except re2.error as exc:
        raise ValueError(f"not a valid RE2 pattern: {re2_error_text(exc)}") from None
    if compiled.match("") is not None:
        raise ValueError(
            "matches an empty message, so it would match the start of every message and wake "
            "the agent on every line; make it require some text (e.g. (?i)hey bot\\b)"
        )
    return compiled
