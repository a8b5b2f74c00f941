"""LinkTools: the plane in force at call time, link events, and the approval hook."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bridge.control import init_config_dir
from bridge.control.plane import ControlPlane, load_control_plane
from bridge.link.messages import (
    ApprovalShow,
    ApprovalShowResult,
    CommandRequest,
    CommandSender,
    WireModel,
)
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.link_tools import LinkTools, PlaneWhitelist
from bridge.tools.results import ErrorCode, ToolFailure

from .plugin_fakes import ALEX, STEVE, FakeLink, context, dispatcher, hello, online, resolver

WAIT = 10.0


def _plane(path: Path, console_rule: str | None, version: int) -> ControlPlane:
    if console_rule is not None:
        (path / "whitelist.yml").write_text(
            f'schema: 1\nenabled: true\nplayer: []\nconsole: ["{console_rule}"]\n'
        )
    return load_control_plane(path, environ={}, version=version)


async def test_the_whitelist_in_force_at_call_time_decides(tmp_path: Path) -> None:
    init_config_dir(tmp_path)
    planes = [_plane(tmp_path, "weather clear", 1)]
    tools = LinkTools(served=lambda: PlaneWhitelist.of(planes[-1]), audit=MemoryAudit())
    link = FakeLink({"command.dispatch": dispatcher(), "command.resolve": resolver()})
    tools.connected(link, hello(["command.resolve"]))
    arguments = {"command": "weather clear", "intent": "", "player": ""}
    first = await tools.handlers()["run_command"](arguments, context())
    planes.append(_plane(tmp_path, "time set day", 2))
    second = await tools.handlers()["run_command"](arguments, context())
    assert (first["status"], second["status"]) == ("dispatched", "refused")


async def test_link_events_reach_the_plugin_view_and_the_broker(tmp_path: Path) -> None:
    init_config_dir(tmp_path)
    plane = _plane(tmp_path, None, 1)
    tools = LinkTools(served=lambda: PlaneWhitelist.of(plane), audit=MemoryAudit())
    shown = asyncio.Event()

    def show(data: WireModel) -> WireModel:
        assert isinstance(data, ApprovalShow)
        shown.set()
        return ApprovalShowResult(shown=True)

    link = FakeLink(
        {"players.list": online(STEVE, ALEX), "approval.show": show, "command.resolve": resolver()}
    )
    tools.connected(link, hello(["snapshots", "approvals", "command.resolve"]))
    assert tools.plugin.features == {"snapshots", "approvals", "command.resolve"}
    arguments = {"command": "spawn", "intent": "go home", "player": "Alex"}
    call = asyncio.create_task(tools.handlers()["run_command"](arguments, context(STEVE)))
    await asyncio.wait_for(shown.wait(), WAIT)
    [prompt] = link.of("approval.show")

    steve = CommandSender(kind="player", player=STEVE, granted=["mineclaw.command.approve"])
    alex = CommandSender(kind="player", player=ALEX, granted=["mineclaw.command.approve"])
    wrong = await tools.approval_handler(CommandRequest(sender=steve, args=["deny", prompt.token]))
    right = await tools.approval_handler(CommandRequest(sender=alex, args=["deny", prompt.token]))
    assert wrong[0].template != right[0].template
    assert right[0].template == plane.messages.approval.denied
    assert (await asyncio.wait_for(call, WAIT))["status"] == "denied"

    again = asyncio.create_task(tools.handlers()["run_command"](arguments, context(STEVE)))
    shown.clear()
    await asyncio.wait_for(shown.wait(), WAIT)
    tools.player_quit(ALEX)
    assert (await asyncio.wait_for(again, WAIT))["status"] == "target_offline"

    shown.clear()
    last = asyncio.create_task(tools.handlers()["run_command"](arguments, context(STEVE)))
    await asyncio.wait_for(shown.wait(), WAIT)
    tools.disconnected()
    assert tools.plugin.features == frozenset()
    with pytest.raises(ToolFailure, match="link dropped") as caught:
        await asyncio.wait_for(last, WAIT)
    assert caught.value.code is ErrorCode.UNAVAILABLE and tools.broker.open_prompts == 0
