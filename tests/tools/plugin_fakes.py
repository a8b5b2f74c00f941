"""Helpers for unit tests of the link-backed tools, around the shared ``FakeLink``
(``tests/support/fake_link.py``): players, hellos, plugin access and scripted answers."""

from __future__ import annotations

import itertools

from support.fake_link import FakeLink, Responder

from bridge.link.codes import ErrorCode
from bridge.link.errors import LinkRequestError
from bridge.link.messages import (
    CommandDispatch,
    CommandDispatchResult,
    CommandResolve,
    CommandResolveResult,
    Hello,
    PlayerRef,
    PlayersListResult,
    ProtocolVersion,
    WireModel,
)
from bridge.tools.plugin_access import PluginAccess
from bridge.tools.registry import CallContext

STEVE = PlayerRef(uuid="3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f", name="Steve")
ALEX = PlayerRef(uuid="0b6f7c1e-2d3a-4e5f-8a9b-0c1d2e3f4a5b", name="Alex")


def hello(features: list[str]) -> Hello:
    return Hello(
        protocol=ProtocolVersion(major=1, minor=1),
        nonce="A" * 43,
        mac="0" * 64,
        instance_id="11111111-2222-4333-8444-555555555555",
        plugin_version="0.1.0",
        minecraft_version="1.21.8",
        platform="testkit",
        features=features,
    )


ALL_FEATURES = ("snapshots", "approvals", "command.resolve")


def access(link: FakeLink, features: tuple[str, ...] = ALL_FEATURES) -> PluginAccess:
    plugin = PluginAccess()
    plugin.connected(link, hello(list(features)))
    return plugin


_TURNS = itertools.count(1)


def context(player: PlayerRef = STEVE, turn_id: str | None = None) -> CallContext:
    """A call of a new turn each time, unless ``turn_id`` names one (a turn asks each player
    once, so calls meant to prompt again must come from new turns)."""
    turn = turn_id or f"t{next(_TURNS)}"
    return CallContext(turn_id=turn, call_id="c1", player_uuid=player.uuid, player_name=player.name)


def online(*players: PlayerRef) -> Responder:
    return lambda _: PlayersListResult(players=list(players))


def offline_error(_: WireModel) -> WireModel:
    raise LinkRequestError(ErrorCode.PLAYER_OFFLINE, "not online")


def dispatcher(status: str = "dispatched") -> Responder:
    def answer(data: WireModel) -> WireModel:
        assert isinstance(data, CommandDispatch)
        feedback = [f"Ran: {data.command}"] if data.executor == "console" else None
        return CommandDispatchResult.model_validate(
            {"dispatch_status": status, "feedback": feedback}
        )

    return answer


# A small command map: vanilla commands, an EssentialsX-like plugin with its aliases and
# permission nodes, LuckPerms, and a commands.yml alias script.
COMMAND_MAP: dict[str, dict[str, object]] = {}


def _command(name: str, plugin: str, permission: str | None, *aliases: str) -> None:
    entry = {"name": name, "plugin": plugin, "aliases": list(aliases), "permission": permission}
    namespace = "minecraft" if plugin == "minecraft" else plugin.lower()
    for label in (name, *aliases):
        COMMAND_MAP[label] = entry
        COMMAND_MAP[f"{namespace}:{label}"] = entry


for _name in (
    "op deop ban kick stop whitelist reload transfer time weather say give setblock fill summon"
    " data item execute return tellraw function schedule gamerule list tp effect msg"
).split():
    _command(_name, "minecraft", f"minecraft.command.{_name}")
_command("sudo", "Essentials", "essentials.sudo", "esudo")
_command("ban", "Essentials", "essentials.ban", "eban")
_command("tempban", "Essentials", "essentials.tempban", "etempban")
_command("eco", "Essentials", "essentials.eco", "eeco", "economy")
_command("spawn", "Essentials", "essentials.spawn", "espawn")
_command("luckperms", "LuckPerms", "luckperms.use", "lp", "perm")
_command("cmi", "CMI", "cmi.command", "cmi")
_command("plugman", "PlugManX", "plugman.admin", "pm")
_command("warp", "Shop", "shop.warp", "go")
_command("grant", "Grants", "grants.vip.give", "gr")


def resolver(extra: dict[str, dict[str, object]] | None = None) -> Responder:
    """Answers ``command.resolve`` from ``COMMAND_MAP`` (and ``extra``)."""
    commands = {**COMMAND_MAP, **(extra or {})}

    def answer(data: WireModel) -> WireModel:
        assert isinstance(data, CommandResolve)
        found = []
        for label in data.labels:
            entry = commands.get(label)
            if entry is None:
                found.append(
                    {
                        "label": label,
                        "known": False,
                        "name": None,
                        "plugin": None,
                        "aliases": [],
                        "permission": None,
                        "script": False,
                    }
                )
            else:
                found.append({"label": label, "known": True, "script": False, **entry})
        return CommandResolveResult.model_validate({"commands": found})

    return answer
