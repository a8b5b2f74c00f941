"""What a server's ``tools/list`` becomes: tools fit to offer, and the others with a reason.

A tool's name, description and input schema are a third party's text. The schema must pass
``bridge.schemas`` (data only: no fetch, no ref outside itself, bounded, RE2 patterns) with at
most ``MAX_SCHEMA_CHARS`` of JSON (it goes into every request of every turn) and describe an
object; the description is put on visible characters, cut and headed with the
server's name so the model knows whose words they are. The digest covers exactly what the model
is shown, so a review approves what will be offered (``mcp.require_review``).

Checking a schema against its draft's meta-schema is pure Python and slow (about 0.1 s for one of
16,384 characters), so a listing of 128 such tools took seconds: a running bridge checks a
listing on a thread of its own (``checked_off_loop``), never on the event loop, and the
connection spaces listings by the time their checks took.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcp.types import Tool

from bridge.mcp.naming import exposed_name, name_problem
from bridge.schemas import SafeSchema, SchemaRefused
from bridge.unicode_text import name_skeleton

MAX_TOOLS = 128
"""Tools taken from one server's listing; the rest are refused (a listing is not a flood)."""
MAX_SCHEMA_CHARS = 16_384
MAX_DESCRIPTION_CHARS = 1_500
HEADING = "[MCP server {server}; the server's own description, third-party text] "


_checking = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-listing")
"""Listings are checked here, one at a time whichever server sent them: never on the loop."""


@dataclass(frozen=True, slots=True)
class OfferedTool:
    """A tool that passed the checks, as the model will see it."""

    server: str
    remote: str
    """Its name on the server (what ``tools/call`` names)."""
    name: str
    description: str
    parameters: dict[str, Any]
    digest: str
    """sha256 of the description and schema shown (the review's key)."""


@dataclass(frozen=True, slots=True)
class RefusedTool:
    server: str
    remote: str
    reason: str


def checked_tools(
    server: str, listed: Sequence[Tool]
) -> tuple[tuple[OfferedTool, ...], tuple[RefusedTool, ...]]:
    offered: list[OfferedTool] = []
    refused: list[RefusedTool] = []
    seen: dict[str, str] = {}
    for index, tool in enumerate(listed):
        remote = tool.name
        reason = _problem(server, tool, seen, index)
        if reason is not None:
            refused.append(RefusedTool(server, remote[:80], reason))
            continue
        seen[name_skeleton(remote)] = remote
        description = HEADING.format(server=server) + _visible(tool.description or "")
        if len(description) > MAX_DESCRIPTION_CHARS:
            description = description[: MAX_DESCRIPTION_CHARS - 1] + "…"
        parameters = dict(tool.input_schema)
        digest = hashlib.sha256(
            json.dumps(
                {"description": description, "parameters": parameters},
                sort_keys=True,
                ensure_ascii=False,
            ).encode()
        ).hexdigest()
        offered.append(
            OfferedTool(
                server, remote, exposed_name(server, remote), description, parameters, digest
            )
        )
    return tuple(offered), tuple(refused)


async def checked_off_loop(
    server: str, listed: Sequence[Tool]
) -> tuple[tuple[OfferedTool, ...], tuple[RefusedTool, ...], float]:
    """``checked_tools`` on the listing thread, with the seconds the check took there."""

    def timed() -> tuple[tuple[OfferedTool, ...], tuple[RefusedTool, ...], float]:
        started = time.monotonic()
        offered, refused = checked_tools(server, listed)
        return offered, refused, time.monotonic() - started

    return await asyncio.get_running_loop().run_in_executor(_checking, timed)


def _problem(server: str, tool: Tool, seen: dict[str, str], index: int) -> str | None:
    if index >= MAX_TOOLS:
        return f"the server lists more than {MAX_TOOLS} tools"
    other = seen.get(name_skeleton(tool.name))
    if other == tool.name:
        return "the server lists this name twice"
    if other is not None:
        # The owner's settings match names this way: two such tools could not be told apart.
        return f"its name looks like the name of {other!r}, listed before it"
    named = name_problem(server, tool.name)
    if named is not None:
        return named
    schema = tool.input_schema
    if not isinstance(schema, dict):
        return "its input schema is not a JSON object"
    try:
        SafeSchema.of(schema, max_chars=MAX_SCHEMA_CHARS)
    except SchemaRefused as exc:
        return f"its input schema is refused: {exc}"
    if schema.get("type") != "object":
        return 'its input schema does not have "type": "object"'
    return None


def _visible(text: str) -> str:
    """One paragraph of printable characters: no control characters, no terminal escapes."""
    return " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
