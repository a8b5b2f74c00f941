"""A scripted stand-in for the plugin link, for unit tests of the link-backed tools.

Each request name maps to a function of the request data that returns the answer or raises
``LinkRequestError``; every request is kept so a test can check what was (not) sent.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

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

Responder = Callable[[WireModel], WireModel | Awaitable[WireModel]]


class FakeLink:
    def __init__(self, responders: dict[str, Responder] | None = None) -> None:
        self.responders: dict[str, Responder] = dict(responders or {})
        self.requests: list[tuple[str, WireModel]] = []
        self.connected = True

    async def request(self, name: str, data: WireModel, *, timeout: float | None = None) -> Any:
        self.requests.append((name, data))
        responder = self.responders.get(name)
        if responder is None:
            raise LinkRequestError(ErrorCode.UNKNOWN_TYPE, f"{name} is not scripted")
        answer = responder(data)
        if isinstance(answer, WireModel):
            return answer
        return await answer

    async def send_event(self, name: str, data: WireModel) -> None:
        self.requests.append((name, data))

    def sent(self, name: str) -> list[Any]:
        return [data for sent, data in self.requests if sent == name]


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
