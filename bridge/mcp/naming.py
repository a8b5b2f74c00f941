"""The names the model sees: ``mcp__<server>__<tool>``.

Model APIs take function names of at most 64 characters from ``[A-Za-z0-9_-]``; a server's tool
whose name would not fit is not offered (and says why), never renamed behind the owner's back.
"""

from __future__ import annotations

import re

PREFIX = "mcp__"
SEPARATOR = "__"
_MODEL_NAME = re.compile(r"[A-Za-z0-9_\-]{1,64}")


def exposed_name(server: str, tool: str) -> str:
    return f"{PREFIX}{server}{SEPARATOR}{tool}"


def name_problem(server: str, tool: str) -> str | None:
    """Why ``tool`` of ``server`` cannot be offered under its name, or None."""
    name = exposed_name(server, tool)
    if not _MODEL_NAME.fullmatch(name):
        return f"its name {name!r} is not 1-64 letters, digits, '_' or '-' (what model APIs accept)"
    return None
