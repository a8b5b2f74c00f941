"""The permission nodes the bridge asks the plugin to report beyond the protocol's fixed set.

The plugin reports facts and the bridge decides; but it can only report a node it knows to
read. A tool's ``permission:`` in ``tools.yml`` may name any node (``myserver.web``,
``group.builder``), so the bridge names those nodes in ``link.state`` (``report_nodes``, for a
plugin announcing the ``report_nodes`` feature) and from then on finds them among a player's
Granted facts. Without this, a tool gated by a node of the owner's own was silently shown to
nobody. Capabilities of the bridge that need a node of their own add it to `BRIDGE_NODES`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import get_args

from bridge.app.commands.history import HISTORY_NODE
from bridge.control.plane import ControlPlane
from bridge.link.messages import REPORT_NODES_MAX, Permission
from bridge.memory.records import OTHERS_MEMORY_NODE, SERVER_MEMORY_NODE
from bridge.turns.persona import PERSONA_NODE

log = logging.getLogger(__name__)

REPORT_NODES_FEATURE = "report_nodes"
BRIDGE_NODES: tuple[str, ...] = (
    SERVER_MEMORY_NODE,
    OTHERS_MEMORY_NODE,
    PERSONA_NODE,
    HISTORY_NODE,
)
"""Nodes the bridge's own capabilities decide by, reported whatever ``tools.yml`` says."""

# The protocol's ReportNode: dotted words of [a-z0-9_-], at most 128 characters.
_REPORTABLE = re.compile(r"[a-z0-9_-]{1,32}(\.[a-z0-9_-]{1,32}){0,7}")
_FIXED = frozenset(get_args(Permission))
_BUDGET_PREFIX = "mineclaw.budget."


def reported_nodes(plane: ControlPlane, extra: Iterable[str] = ()) -> list[str]:
    """The nodes to name in ``link.state``: the bridge's own, every tool's ``permission``
    (and ``extra``, nodes of tools from elsewhere), less those the plugin reports anyway;
    sorted, at most `REPORT_NODES_MAX` (the rest are left out with one line in the log)."""
    wanted = set(BRIDGE_NODES)
    wanted.update(spec.permission for spec in plane.tools.tools.values() if spec.permission)
    wanted.update(extra)
    nodes = sorted(
        node
        for node in wanted
        if node not in _FIXED
        and not node.startswith(_BUDGET_PREFIX)
        and len(node) <= 128
        and _REPORTABLE.fullmatch(node)
    )
    if len(nodes) > REPORT_NODES_MAX:
        log.warning(
            "%d permission nodes to report, the plugin reads at most %d: not reported: %s",
            len(nodes),
            REPORT_NODES_MAX,
            ", ".join(nodes[REPORT_NODES_MAX:]),
        )
    return nodes[:REPORT_NODES_MAX]
