"""The simulated Minecraft server: a plugin that speaks the real link protocol.

It connects to the bridge over a real WebSocket, completes the handshake with the link token,
sends the player's chat and commands as ``chat`` and ``command`` requests, and answers the
bridge's requests the way the plugin would: it "shows" lines, action bars and approval prompts
to the screen (``Show``), dispatches commands to nowhere, and describes a small fixed world for
the snapshot tools. Frames are encoded and checked by the bridge's own codec, so a frame the
real plugin could not send is not sent here either.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import websockets

from bridge import __version__
from bridge.app.chat.reported_nodes import REPORT_NODES_FEATURE
from bridge.link.auth import compute_mac
from bridge.link.codec import DecodeFault, decode_frame, encode_frame
from bridge.link.messages import (
    ApprovalShow,
    ApprovalShowResult,
    BlockView,
    ChatRequest,
    ChatVerdict,
    CommandDispatch,
    CommandDispatchResult,
    CommandReply,
    CommandRequest,
    CommandResolve,
    CommandResolveResult,
    Direction,
    ErrorData,
    Hello,
    HelloChallenge,
    LinkState,
    MovementState,
    OutputActionbar,
    OutputChat,
    OutputChatResult,
    Permission,
    PlayerEvent,
    PlayerRef,
    PlayersListResult,
    ProtocolVersion,
    ResolvedCommand,
    SnapshotBlockResult,
    SnapshotItemResult,
    SnapshotPlayerResult,
    Text,
    WireModel,
)
from bridge.tools.command_judge import RESOLVE
from bridge.tools.plugin_access import APPROVALS, SNAPSHOTS

ShowKind = Literal["public", "private", "actionbar", "prompt", "notice", "game", "server"]
Show = Callable[[ShowKind, str, str], None]
"""``show(kind, player name or "", text)``: what a player would see (``game``: what the
simulated server itself did; ``server``: what the bridge did)."""

FEATURES = [SNAPSHOTS, APPROVALS, RESOLVE, REPORT_NODES_FEATURE]
"""The plugin features it announces: the snapshot tools, approval prompts, command resolution
(without which the bridge dispatches nothing), and reporting the nodes the bridge names (its
own, such as ``mineclaw.persona`` and ``mineclaw.history``, and every tool's)."""
PLAYER_NODES = [
    "mineclaw.command.chat",
    "mineclaw.command.approve",
    "mineclaw.command.private",
    "mineclaw.tool.run_command",
]
"""What plugin.yml grants everyone (``default: true``)."""
OP_NODES = [node for node in get_args(Permission) if node != "mineclaw.bypass.ratelimit"]
"""What plugin.yml grants operators (``default: op``; the rate-limit bypass is nobody's)."""
WAIT_S = 60.0
"""How long a request to the bridge may take; a bound, not a speed."""

_TAG = re.compile(r"<[^<>]*>")


def plain(text: Text) -> str:
    """A Text as a client shows it, without colours: placeholders filled, style tags dropped
    (the template's and the model text's; a plain value is shown as it is, brackets and all)."""
    out = text.template.replace("<newline>", " ")
    filled = {**(text.values or {})}  # plain text: shown as it is
    filled.update({k: _TAG.sub("", v) for k, v in (text.model or {}).items()})  # styled
    for name, value in filled.items():
        out = out.replace(f"<{name}>", "\x00" + value.replace("<", "\x01") + "\x00")
    parts = out.split("\x00")  # odd parts are filled values: their brackets are text
    shown = [part if i % 2 else _TAG.sub("", part) for i, part in enumerate(parts)]
    return "".join(shown).replace("\x01", "<")


@dataclass
class Player:
    name: str
    op: bool = False

    @property
    def ref(self) -> PlayerRef:
        return PlayerRef(
            uuid=str(uuid.uuid5(uuid.NAMESPACE_OID, f"mineclaw:{self.name}")), name=self.name
        )

    @property
    def granted(self) -> list[str]:
        return OP_NODES if self.op else PLAYER_NODES


@dataclass
class Prompt:
    """An approval prompt shown to a player: its token and its buttons' answers."""

    token: str
    answers: list[tuple[str, str | None]] = field(default_factory=list)


class SimulatedServer:
    def __init__(self, url: str, token: str, show: Show) -> None:
        self._url = url
        self._token = token
        self._show = show
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None
        self.players: dict[str, Player] = {}
        """Online players by UUID."""
        self.prompts: dict[str, Prompt] = {}
        """The latest approval prompt of each player, by UUID."""
        self.public_prefix = "@ai"
        """What starts a public line to the assistant (the latest ``link.state`` says)."""
        self.instance_id = str(uuid.uuid4())
        """One per server run, as a real plugin's: a relink (``/disconnect``, ``/connect``)
        is the same server linking again and keeps what the bridge holds for it (listen
        mode); a new id would be a restarted server, which starts with listen mode off."""
        self.reported_nodes: list[str] = []
        """The other nodes the bridge asked to be reported (the latest ``link.state``): an
        operator holds them all, as on Paper, where a node no plugin declares is an op's."""

    # ---- connection

    async def connect(self) -> None:
        self._ws = await websockets.connect(self._url, max_size=None)
        challenge = decode_frame(await self._ws.recv(), Direction.BRIDGE_TO_PLUGIN)
        if isinstance(challenge, DecodeFault) or not isinstance(challenge.data, HelloChallenge):
            raise ConnectionError("the bridge did not open with hello.challenge")
        instance = self.instance_id
        nonce = challenge.data.nonce
        hello = Hello(
            protocol=ProtocolVersion(major=1, minor=3),
            nonce=nonce,
            mac=compute_mac(self._token, nonce, instance),
            instance_id=instance,
            plugin_version=__version__,
            minecraft_version="1.21.8",
            platform="testkit",
            features=list(FEATURES),
        )
        self._reader = asyncio.create_task(self._read(), name="simulated server link")
        await self.request("hello", hello)

    @property
    def linked(self) -> bool:
        return self._ws is not None

    async def close(self) -> None:
        """Closes the link (1000, as a server stopping does); ``connect`` links again."""
        ws, reader = self._ws, self._reader
        self._ws = self._reader = None
        if ws is not None:
            await ws.close()
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader

    async def request(self, name: str, data: WireModel) -> Any:
        frame_id = f"p-{next(self._ids)}"
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[frame_id] = answer
        try:
            if self._ws is None:
                raise ConnectionError("the server is not linked to the bridge (/connect)")
            await self._ws.send(encode_frame(id=frame_id, type=name, data=data))
            async with asyncio.timeout(WAIT_S):
                return await answer
        finally:
            self._pending.pop(frame_id, None)

    async def event(self, name: str, data: WireModel) -> None:
        if self._ws is None:
            return  # the bridge learns who is online from the next chat or command
        await self._ws.send(encode_frame(id=f"p-{next(self._ids)}", type=name, data=data))

    async def _read(self) -> None:
        ws = self._ws
        try:
            async for raw in ws:
                frame = decode_frame(raw, Direction.BRIDGE_TO_PLUGIN)
                if isinstance(frame, DecodeFault):
                    self._show("server", "", f"link: a frame did not decode: {frame.message}")
                    continue
                if frame.re is not None:
                    waiting = self._pending.get(frame.re)
                    if waiting is not None and not waiting.done():
                        if isinstance(frame.data, ErrorData):
                            waiting.set_exception(ConnectionError(frame.data.message))
                        else:
                            waiting.set_result(frame.data)
                    continue
                answer = self._answer(frame.type, frame.data)
                if answer is not None:
                    await ws.send(
                        encode_frame(
                            id=f"p-{next(self._ids)}",
                            type=f"{frame.type}.result",
                            data=answer,
                            re=frame.id,
                        )
                    )
        except websockets.ConnectionClosed:
            pass
        finally:
            for waiting in self._pending.values():
                if not waiting.done():
                    waiting.set_exception(ConnectionError("the link closed"))
            self._show("game", "", "link closed")

    # ---- what players do

    async def join(self, player: Player) -> None:
        if player.ref.uuid not in self.players:
            self.players[player.ref.uuid] = player
            await self.event("player.join", PlayerEvent(player=player.ref))
        self.players[player.ref.uuid] = player  # an OP change takes effect at once

    async def chat(self, player: Player, text: str) -> ChatVerdict:
        request = ChatRequest(player=player.ref, granted=self.granted(player), text=text)
        verdict: ChatVerdict = await self.request("chat", request)
        if verdict.decision != "refuse" and verdict.ai_prefix:
            # A line listen mode took without the wake prefix: the plugin's AI prefix before it,
            # as players see it (`chat.ai-prefix`).
            self._show("public", "", f"[AI] <{player.name}> {text}")
        elif verdict.decision != "refuse":
            self._show("public", player.name, text)
        if verdict.notice is not None:
            self._show("notice", player.name, plain(verdict.notice))
        return verdict

    async def command(self, player: Player, args: list[str]) -> list[str]:
        sender = {"kind": "player", "player": player.ref, "granted": self.granted(player)}
        request = CommandRequest.model_validate({"sender": sender, "args": args})
        reply: CommandReply = await self.request("command", request)
        lines = [plain(line) for line in reply.lines]
        for line in lines:
            self._show("private", player.name, line)
        return lines

    # ---- the bridge's requests

    def granted(self, player: Player) -> list[str]:
        """What the plugin reports ``player`` holds: plugin.yml's nodes, and for an operator
        every node the bridge named too (``/mineclaw`` help lists commands by them)."""
        return [*OP_NODES, *self.reported_nodes] if player.op else PLAYER_NODES

    def _name(self, player_uuid: str) -> str:
        found = self.players.get(player_uuid)
        return found.name if found is not None else player_uuid

    def _answer(self, kind: str, data: WireModel) -> WireModel | None:
        if isinstance(data, OutputChat):
            if data.target == "broadcast":
                self._show("public", "", plain(data.text))
            else:
                self._show("private", self._name(str(data.player)), plain(data.text))
            return OutputChatResult(delivered=1 if data.target == "player" else len(self.players))
        if isinstance(data, LinkState):
            self.public_prefix = data.public_prefix
            self.reported_nodes = list(data.report_nodes or ())
            return None
        if isinstance(data, OutputActionbar):
            self._show("actionbar", self._name(data.player), plain(data.text))
            return None
        if kind == "players.list":
            return PlayersListResult(players=[p.ref for p in self.players.values()])
        if isinstance(data, CommandResolve):
            return CommandResolveResult(commands=[_resolved(label) for label in data.labels])
        if isinstance(data, CommandDispatch):
            who = "console" if data.executor == "console" else self._name(str(data.player))
            self._show("game", "", f"{who} ran /{data.command} (simulated: nothing changes)")
            feedback = [f"(simulated) /{data.command}"] if data.executor == "console" else None
            return CommandDispatchResult(dispatch_status="dispatched", feedback=feedback)
        if isinstance(data, ApprovalShow):
            answers: list[tuple[str, str | None]] = [
                (button.answer, button.option) for button in data.buttons
            ]
            self.prompts[data.player] = Prompt(data.token, answers)
            labels = " ".join(f"[{plain(button.label)}]" for button in data.buttons)
            self._show("prompt", self._name(data.player), f"{plain(data.prompt)} {labels}")
            return ApprovalShowResult(shown=True)
        if kind.startswith("snapshot."):
            return _snapshot(kind, self.players.get(getattr(data, "player", "")))
        return None  # an event the playground does not show (link.state)


def _resolved(label: str) -> ResolvedCommand:
    """Every label is a vanilla command of that name (the server's map is not simulated)."""
    name = label.split(":")[-1]
    return ResolvedCommand(
        label=label,
        known=True,
        name=name,
        plugin="minecraft",
        aliases=[],
        permission=f"minecraft.command.{name}"[:256],
        script=False,
    )


def _snapshot(kind: str, player: Player | None) -> WireModel:
    ref = (player or Player("Steve")).ref
    if kind == "snapshot.item":
        return SnapshotItemResult.model_validate(
            {
                "items": [
                    {
                        "slot": "main_hand",
                        "type": "minecraft:iron_pickaxe",
                        "amount": 1,
                        "custom_name": None,
                        "enchantments": [],
                        "damage": {"current": 12, "max": 250},
                    },
                    {
                        "slot": "0",
                        "type": "minecraft:bread",
                        "amount": 5,
                        "custom_name": None,
                        "enchantments": [],
                        "damage": None,
                    },
                ],
                "truncated": False,
            }
        )
    if kind == "snapshot.block":
        block = BlockView.model_validate(
            {
                "type": "minecraft:oak_log",
                "position": {"x": 12, "y": 64, "z": -30},
                "world": "world",
                "properties": {"axis": "y"},
                "light": 15,
            }
        )
        return SnapshotBlockResult(result="hit", block=block)
    return SnapshotPlayerResult.model_validate(
        {
            "player": ref.model_dump(),
            "world": "world",
            "dimension": "overworld",
            "position": {"x": 10.5, "y": 64.0, "z": -28.25},
            "facing": {"yaw": 90.0, "pitch": 0.0},
            "health": 20.0,
            "max_health": 20.0,
            "food": 18,
            "saturation": 5.0,
            "level": 7,
            "game_mode": "survival",
            "state": dict.fromkeys(MovementState.model_fields, False) | {"on_ground": True},
            "environment": {
                "time_of_day": 6000,
                "weather": "clear",
                "biome": "minecraft:plains",
                "light": 15,
            },
            "effects": [],
        }
    )
