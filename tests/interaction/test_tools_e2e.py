"""The link-backed tools end to end: a real LinkServer in this process, the testkit JVM linked
to it, and every call made through ``ToolInvoker`` as a turn would make it (no model).

The testkit is driven through its control interface (plugin-java/testkit/CONTROL.md): players
join and leave, their snapshot facts are set, and approval buttons are "clicked" by running
``/mineclaw approve|deny <token>`` as a player, which reaches the bridge as an ordinary
``command`` request from that player.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bridge.control import init_config_dir
from bridge.control.plane import load_control_plane
from bridge.link.handler import Link, PlaceholderHandler
from bridge.link.messages import (
    ApprovalShow,
    CommandReply,
    CommandRequest,
    Hello,
    PlayerRef,
    WireModel,
)
from bridge.link.server import LinkServer, LinkSettings
from bridge.policy.approval_commands import ApprovalCommands
from bridge.store.audit_sink import MemoryAudit
from bridge.tools import CallContext, Cooldowns, ToolInvoker
from bridge.tools.assembly import redactor_for, registry_for
from bridge.tools.link_tools import LinkTools
from bridge.tools.plugin_access import offered

from .processes import EVENT_TIMEOUT, TestkitProcess, require_testkit_jar

pytestmark = pytest.mark.jvm

TOKEN = "e2e-link-token-0123456789abcdefghijklmnopqrstuv"
STEVE = PlayerRef(uuid="3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f", name="Steve")
ALEX = PlayerRef(uuid="0b6f7c1e-2d3a-4e5f-8a9b-0c1d2e3f4a5b", name="Alex")
APPROVER = ["mineclaw.command.approve"]
WHITELIST = """schema: 1
enabled: true
player:
  - "time query (day|daytime)"
console:
  - "time set (day|night)"
  - "weather (clear|rain)"
"""

BYPASSES = [
    "op Steve",
    "/op Steve",
    "minecraft:op Steve",
    "execute as @a run op Steve",
    "execute run time set day",
    "time set day\nop Steve",
    "time set day\u2028op Steve",
    "time set day @a",
    "time set @e[type=player] day",
    "time set day; op Steve",
    "time set  day",
    "minecraft:time set day",
]


class RecordingLink:
    """The server's link as LinkTools sees it, keeping each approval.show it sends."""

    def __init__(self, inner: Link) -> None:
        self._inner = inner
        self.prompts: asyncio.Queue[ApprovalShow] = asyncio.Queue()

    @property
    def connected(self) -> bool:
        return self._inner.connected

    async def request(self, name: str, data: WireModel, *, timeout: float | None = None) -> Any:
        if isinstance(data, ApprovalShow):
            self.prompts.put_nowait(data)
        return await self._inner.request(name, data, timeout=timeout)

    async def send_event(self, name: str, data: WireModel) -> None:
        await self._inner.send_event(name, data)


class ToolsHandler(PlaceholderHandler):
    """The placeholder for chat, with LinkTools wired the way the app wires it."""

    def __init__(self, tools: LinkTools) -> None:
        super().__init__()
        self.tools = tools
        self.link: RecordingLink | None = None
        self.hello: Hello | None = None
        self.linked = asyncio.Event()
        self.joined: asyncio.Queue[str] = asyncio.Queue()
        self.quit: asyncio.Queue[str] = asyncio.Queue()

    async def on_connected(self, link: Link, hello: Hello) -> None:
        await super().on_connected(link, hello)
        self.link = RecordingLink(link)
        self.hello = hello
        self.tools.connected(self.link, hello)
        self.linked.set()

    async def on_disconnected(self) -> None:
        await super().on_disconnected()
        self.tools.disconnected()

    async def on_command(self, request: CommandRequest) -> CommandReply:
        if ApprovalCommands.handles(request):
            return CommandReply(lines=await self.tools.approval_handler(request))
        return await super().on_command(request)

    async def on_player_join(self, player: PlayerRef) -> None:
        self.joined.put_nowait(player.name)

    async def on_player_quit(self, player: PlayerRef) -> None:
        self.tools.player_quit(player)
        self.quit.put_nowait(player.name)


@dataclass
class World:
    testkit: TestkitProcess
    handler: ToolsHandler
    invoker: ToolInvoker
    audit: MemoryAudit

    async def call(self, tool: str, arguments: dict[str, Any], player: PlayerRef = STEVE) -> Any:
        context = CallContext("turn", f"call-{tool}", player.uuid, player.name)
        outcome = await asyncio.wait_for(
            self.invoker.invoke(tool, json.dumps(arguments), context), EVENT_TIMEOUT
        )
        return outcome.model_dump(mode="json", exclude_none=True)

    async def command(self, sender: str, *args: str, ref: str) -> list[str]:
        """Runs ``/mineclaw <args>`` as ``sender``; the lines the sender saw."""
        since = len(self.testkit.events)
        await self.testkit.send({"op": "command", "sender": sender, "args": list(args), "ref": ref})
        await self.testkit.wait_event(lambda e: e == {"event": "command.done", "ref": ref})
        return [
            e["text"]
            for e in self.testkit.events[since:]
            if e.get("event") == "message" and e.get("to") == sender
        ]

    async def prompt(self) -> ApprovalShow:
        assert self.handler.link is not None
        return await asyncio.wait_for(self.handler.link.prompts.get(), EVENT_TIMEOUT)

    def dispatches(self) -> list[dict[str, Any]]:
        return [e for e in self.testkit.events if e.get("event") == "dispatch"]

    async def dispatch_seen(self, command: str) -> None:
        await self.testkit.wait_event(
            lambda e: e.get("event") == "dispatch" and e["command"] == command
        )


@contextlib.asynccontextmanager
async def world(tmp_path: Path) -> AsyncIterator[World]:
    require_testkit_jar()
    config = tmp_path / "config"
    init_config_dir(config)
    (config / "whitelist.yml").write_text(WHITELIST, encoding="utf-8")
    plane = load_control_plane(config, environ={})
    audit = MemoryAudit()
    tools = LinkTools(plane=lambda: plane, audit=audit)
    handler = ToolsHandler(tools)
    token_file = tmp_path / "link.token"
    token_file.write_text(TOKEN, encoding="utf-8")
    settings = LinkSettings(port=0)
    async with LinkServer(token=TOKEN, handler=handler, settings=settings) as server:
        testkit = await TestkitProcess.start(server.url, token_file)
        try:
            await asyncio.wait_for(handler.linked.wait(), EVENT_TIMEOUT)
            for player in (STEVE, ALEX):
                await testkit.send(
                    {
                        "op": "player.add",
                        "name": player.name,
                        "uuid": player.uuid,
                        "permissions": APPROVER,
                    }
                )
                assert await asyncio.wait_for(handler.joined.get(), EVENT_TIMEOUT) == player.name
            assert handler.hello is not None
            registry = registry_for(plane, extra_handlers=tools.handlers())
            granted = frozenset({"mineclaw.tool.run_command"})
            turn_tools = offered(registry.for_player(granted), tools.plugin.features)
            invoker = ToolInvoker(
                turn_tools,
                cooldowns=Cooldowns(cooldown_ms=0),
                redactor=redactor_for(plane),
                audit=audit,
            )
            yield World(testkit, handler, invoker, audit)
        finally:
            await testkit.shutdown()


# ---- run_command: the whitelist


async def test_whitelist_bypass_attempts_are_refused_and_never_reach_the_server(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        for command in BYPASSES:
            for player in ("", "Steve"):
                arguments = {"command": command, "intent": "probe", "player": player}
                result = await w.call("run_command", arguments)
                assert result["ok"] and result["result"]["status"] == "refused", (command, result)
        # A permitted command afterwards: once its dispatch is seen, none before it slipped by.
        allowed = {"command": "weather clear", "intent": "sun", "player": ""}
        assert (await w.call("run_command", allowed))["result"]["status"] == "dispatched"
        await w.dispatch_seen("weather clear")
        assert [d["command"] for d in w.dispatches()] == ["weather clear"]


async def test_console_and_own_commands_run_and_say_what_is_known(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        console = await w.call(
            "run_command", {"command": "/time set night", "intent": "dark", "player": ""}
        )
        assert console["result"] == {
            "status": "dispatched",
            "command": "time set night",
            "executor": "console",
            "dispatch_status": "dispatched",
            "execution_result": "unknown",
            "feedback": ["Ran: time set night"],
        }
        own = await w.call(
            "run_command", {"command": "time query day", "intent": "ask", "player": "Steve"}
        )
        assert own["result"]["executor"] == "player" and own["result"]["player"] == "Steve"
        assert own["result"]["execution_result"] == "unknown" and "feedback" not in own["result"]
        await w.dispatch_seen("time query day")
        assert {(d["executor"], d["command"]) for d in w.dispatches()} == {
            ("console", "time set night"),
            ("Steve", "time query day"),
        }
        offline = await w.call(
            "run_command", {"command": "time set day", "intent": "x", "player": "Herobrine"}
        )
        assert offline["result"]["status"] == "target_offline"
        kinds = [f["status"] for k, f in w.audit.events if k == "run_command.decision"]
        assert kinds == ["dispatched", "dispatched", "target_offline"]
