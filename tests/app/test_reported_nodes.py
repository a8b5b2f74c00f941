"""Which permission nodes the bridge asks the plugin to report: every tools.yml permission of
the owner's own, never one the plugin reports anyway, at most what the protocol carries."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bridge.app.chat.reported_nodes import reported_nodes
from bridge.control.plane import ControlPlane, load_control_plane
from bridge.link.messages import REPORT_NODES_MAX

from .conftest import write_config

TOOL = """  {name}:
    handler: list
    description: List files.
    permission: {node}
    parameters: {{type: object, properties: {{}}}}
"""


def plane_with(tmp_path: Path, nodes: list[str]) -> ControlPlane:
    config = tmp_path / "config"
    write_config(config, 9)
    tools = "".join(TOOL.format(name=f"t{n}", node=node) for n, node in enumerate(nodes))
    (config / "tools.yml").write_text("schema: 1\ntools:\n" + tools)
    return load_control_plane(config, environ={})


def test_owner_nodes_are_asked_for_and_the_fixed_ones_are_not(tmp_path: Path) -> None:
    plane = plane_with(
        tmp_path,
        [
            "myserver.lookup",
            "mineclaw.tool.run_command",
            "group.builder",
            "myserver.lookup",
            "mineclaw.budget.vip",
        ],
    )
    assert reported_nodes(plane) == [
        "group.builder",
        "mineclaw.command.history",
        "mineclaw.memory.others",
        "mineclaw.memory.server",
        "mineclaw.persona",
        "myserver.lookup",
    ]


def test_more_nodes_than_the_protocol_carries_are_cut_with_a_line_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    nodes = [f"myserver.n{n:02d}" for n in range(REPORT_NODES_MAX)]
    plane = plane_with(tmp_path, nodes)
    with caplog.at_level(logging.WARNING):
        asked = reported_nodes(plane)
    # The bridge's own four nodes (history, memory, persona) sort first; the last four of the
    # owner's are cut.
    assert asked[4:] == nodes[: REPORT_NODES_MAX - 4]
    assert "not reported: myserver.n28, myserver.n29, myserver.n30, myserver.n31" in caplog.text


def test_a_node_the_plugin_could_not_be_asked_for_sets_its_tool_aside_with_a_warning(
    tmp_path: Path,
) -> None:
    plane = plane_with(tmp_path, ["myserver." + "x" * 40, "myserver.ok"])
    assert list(plane.tools.tools) == ["t1"] and "myserver.ok" in reported_nodes(plane)
    assert not any("x" * 40 in node for node in reported_nodes(plane))
    (warning,) = [str(w) for w in plane.warnings if "permission" in str(w)]
    assert "tools.yml" in warning and "t0" in warning and "at most 32 characters" in warning
