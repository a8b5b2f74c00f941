"""The action-bar line while a round's tools run: ``◆ tool, tool ◆`` (``reply.tools``).

Only names of tools the turn offered are shown: the model may ask for a tool by any name, and a
name it made up is its own text, which never reaches a player outside the reply's layout. The
names are offered tool names (``[a-z][a-z0-9_]*``, from ``tools.yml``), each shown once, at most
``MAX_NAMES`` of them and never more characters than the action bar holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bridge.providers.items import ToolCall, ToolSpec

THINKING = "reply.thinking"
TOOLS = "reply.tools"
MAX_NAMES = 4


def tool_status(calls: Iterable[ToolCall], offered: Sequence[ToolSpec], max_chars: int) -> str:
    """The names for ``<tools>``: ``time_set, weather`` or ``a, b, c, d +2``; "" when none of
    the calls names an offered tool."""
    known = {spec.name for spec in offered}
    names: list[str] = []
    for call in calls:
        if call.name in known and call.name not in names:
            names.append(call.name)
    shown = ", ".join(names[:MAX_NAMES])
    if len(names) > MAX_NAMES:
        shown += f" +{len(names) - MAX_NAMES}"
    if len(shown) > max_chars:
        shown = shown[: max_chars - 1].rstrip(", ") + "…"
    return shown
