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


def access(link: FakeLink, features: tuple[str, ...] = ("snapshots", "approvals")) -> PluginAccess:
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
