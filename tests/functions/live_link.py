"""A real `LinkServer` on loopback, a scripted plugin speaking to it with `websockets`, and the
live host's collaborators (plugin view, approval broker, a tool invoker) around it."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from bridge.control.messages_file import ApprovalMessages
from bridge.control.tools_file import ToolsFile
from bridge.link.auth import compute_mac
from bridge.link.handler import Link
from bridge.link.messages import CommandReply, CommandRequest, Hello
from bridge.link.server import LinkServer, LinkSettings
from bridge.policy.approval_commands import ApprovalCommands
from bridge.policy.approvals import ApprovalBroker
from bridge.redaction import Redactor
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.plugin_access import PluginAccess
from bridge.tools.registry import CallContext, ToolRegistry
from bridge.tools.snapshots import SnapshotTools
from tests.link.placeholder import PlaceholderHandler

TOKEN = "t" * 43
INSTANCE = "3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f"
WAIT_S = 10.0
STEVE = {"uuid": "0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1b", "name": "Steve"}
ALEX = {"uuid": "1c8f5e2b-3d4a-4f6e-9b8c-7d6e5f4a3b2c", "name": "Alex"}
SECRET_NAME = "Hunter2Admin"
"""An online player whose name is also a configured secret: native results must redact it."""


class Handler(PlaceholderHandler):
    """What the app's handler does for Functions: feed the plugin view, close prompts on link
    loss, route `/mineclaw approve|deny` to the broker."""

    def __init__(self, plugin: PluginAccess, broker: ApprovalBroker) -> None:
        super().__init__()
        self.plugin, self.broker = plugin, broker
        self.approvals = ApprovalCommands(broker, messages=ApprovalMessages)
        self.up = asyncio.Event()
        self.down = asyncio.Event()

    async def on_connected(self, link: Link, hello: Hello) -> None:
        self.plugin.connected(link, hello)
        self.down.clear()
        self.up.set()

    async def on_disconnected(self) -> None:
        self.plugin.disconnected()
        self.broker.link_lost()
        self.up.clear()
        self.down.set()

    async def on_command(self, request: CommandRequest) -> CommandReply:
        return self.approvals.handle(request)


@dataclass
class ScriptedPlugin:
    """Answers the bridge's requests as told; records them; clicks prompt buttons on request."""

    ws: ClientConnection
    online: list[dict[str, str]] = field(default_factory=lambda: [STEVE, ALEX])
    dispatch_answer: dict[str, Any] = field(
        default_factory=lambda: {"dispatch_status": "dispatched", "feedback": ["Gave 4 bread"]}
    )
    dispatch_error: str | None = None
    show_prompts: bool = True
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    prompts: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    replies: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def sent(self, kind: str) -> list[dict[str, Any]]:
        return [data for name, data in self.requests if name == kind]

    async def send(self, kind: str, data: dict[str, Any], *, re: str | None = None) -> None:
        envelope: dict[str, Any] = {"v": 1, "id": f"p-{next(self._ids)}", "type": kind}
        envelope["data"] = data
        if re is not None:
            envelope["re"] = re
        await self.ws.send(json.dumps(envelope))

    async def click(self, player: dict[str, str], verb: str, token: str, *extra: str) -> None:
        """`/mineclaw approve|deny <token> [option]` from `player`, as the plugin sends it."""
        sender = {"kind": "player", "player": player, "granted": ["mineclaw.command.chat"]}
        await self.send("command", {"sender": sender, "args": [verb, token, *extra]})

    async def serve(self) -> None:
        async for raw in self.ws:
            frame = json.loads(raw)
            kind, data = frame["type"], frame.get("data", {})
            if kind == "command.result":
                await self.replies.put(data)
                continue
            if "re" in frame or kind in ("link.state", "error"):
                continue
            self.requests.append((kind, data))
            await self._answer(frame["id"], kind, data)

    async def _answer(self, request_id: str, kind: str, data: dict[str, Any]) -> None:
        if kind == "command.resolve":
            # Every label is a vanilla command of that name (the never list judges names).
            commands = [
                {
                    "label": label,
                    "known": True,
                    "name": label.rpartition(":")[2],
                    "plugin": "minecraft",
                    "aliases": [],
                    "permission": f"minecraft.command.{label.rpartition(':')[2]}",
                    "script": False,
                }
                for label in data["labels"]
            ]
            await self.send("command.resolve.result", {"commands": commands}, re=request_id)
        elif kind == "players.list":
            await self.send("players.list.result", {"players": self.online}, re=request_id)
        elif kind == "command.dispatch" and self.dispatch_error is not None:
            error = {"code": self.dispatch_error, "message": "scripted"}
            await self.send("error", error, re=request_id)
        elif kind == "command.dispatch":
            answer = dict(self.dispatch_answer)
            if data["executor"] == "player":
                answer["feedback"] = None  # the protocol: no feedback for a player executor
            await self.send("command.dispatch.result", answer, re=request_id)
        elif kind == "approval.show":
            await self.send("approval.show.result", {"shown": self.show_prompts}, re=request_id)
            if self.show_prompts:
                await self.prompts.put(data)


@dataclass
class Live:
    server: LinkServer
    handler: Handler
    plugin: PluginAccess
    broker: ApprovalBroker
    audit: MemoryAudit
    connect: Callable[..., Awaitable[ScriptedPlugin]]


@asynccontextmanager
async def live_link() -> AsyncIterator[Live]:
    plugin, broker, audit = PluginAccess(), ApprovalBroker(), MemoryAudit()
    handler = Handler(plugin, broker)
    clients: list[tuple[ClientConnection, asyncio.Task[None]]] = []
    async with LinkServer(token=TOKEN, handler=handler, settings=LinkSettings(port=0)) as server:

        async def connect_plugin(**script: Any) -> ScriptedPlugin:
            ws = await asyncio.wait_for(connect(server.url, max_size=None), WAIT_S)
            challenge = json.loads(await asyncio.wait_for(ws.recv(), WAIT_S))
            nonce = challenge["data"]["nonce"]
            hello = {
                "protocol": {"major": 1, "minor": 1},
                "nonce": nonce,
                "mac": compute_mac(TOKEN, nonce, INSTANCE),
                "instance_id": INSTANCE,
                "plugin_version": "0.1.0",
                "minecraft_version": "1.21.10",
                "platform": "testkit",
                "features": ["snapshots", "approvals", "command.resolve"],
            }
            await ws.send(json.dumps({"v": 1, "id": "p-hello", "type": "hello", "data": hello}))
            scripted = ScriptedPlugin(ws, **script)
            clients.append((ws, asyncio.get_running_loop().create_task(scripted.serve())))
            await asyncio.wait_for(handler.up.wait(), WAIT_S)
            return scripted

        try:
            yield Live(server, handler, plugin, broker, audit, connect_plugin)
        finally:
            for ws, task in clients:
                ws.transport.abort()
                task.cancel()
                await asyncio.wait({task}, timeout=WAIT_S)


async def _noop(arguments: dict[str, Any], context: CallContext) -> Any:
    return {"never": "reached"}


def tool_invoker(plugin: PluginAccess, audit: MemoryAudit) -> ToolInvoker:
    """`online_players` over the real link, and `nested`: `call_function` under another name."""
    tools = ToolsFile.model_validate(
        {
            "schema": 1,
            "tools": {
                "online_players": {
                    "handler": "online_players",
                    "description": "who is online",
                    "parameters": {
                        "type": "object",
                        "properties": {},
                        "additionalProperties": False,
                    },
                },
                "nested": {
                    "handler": "call_function",
                    "description": "call_function renamed",
                    "parameters": {"type": "object"},
                },
            },
        }
    )
    handlers = {
        "online_players": SnapshotTools(plugin).handlers()["online_players"],
        "call_function": _noop,
    }
    registry = ToolRegistry.from_tools_file(tools, handlers)
    return ToolInvoker(
        registry.for_player(()),
        cooldowns=Cooldowns(cooldown_ms=0),
        redactor=Redactor((), secret_values=[SECRET_NAME]),
        audit=audit,
    )
