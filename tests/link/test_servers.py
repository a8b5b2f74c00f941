"""Several servers on one link: each authenticates with its own id and token, gets its own
handler, and one connection per id (a newer one replaces it) while other ids stay linked."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from bridge.link.codes import CloseCode
from bridge.link.errors import LinkRequestError
from bridge.link.handler import LinkHandler
from bridge.link.messages import PlayersList, PlayersListResult
from bridge.link.protocol import DEFAULT_SERVER_ID
from bridge.link.server import REVOKED_CHANGED, REVOKED_REMOVED, LinkServer, LinkSettings, Revoked

from .conftest import WAIT, FakePlugin, RecordingHandler
from .helpers import TOKEN, chat, frame, hello

TOKENS = {"lobby": "L" * 43, "survival": "S" * 43, DEFAULT_SERVER_ID: TOKEN}


class Table:
    """A server table with a handler per id and a switch for which ids this bridge serves."""

    def __init__(self) -> None:
        self.handlers = {server_id: RecordingHandler() for server_id in TOKENS}
        self.not_served: set[str] = set()
        self.tokens = dict(TOKENS)
        """What a reload would leave in force (servers.yml and .env)."""

    def token(self, server_id: str) -> str | None:
        return self.tokens.get(server_id)

    def handler(self, server_id: str) -> LinkHandler:
        return self.handlers[server_id]

    def serves(self, server_id: str) -> bool:
        return server_id not in self.not_served


@pytest.fixture
def table() -> Table:
    return Table()


@pytest.fixture
async def network(table: Table) -> AsyncIterator[LinkServer]:
    async with LinkServer(servers=table, settings=LinkSettings(port=0)) as running:
        yield running


@pytest.fixture
async def open_plugin(network: LinkServer) -> AsyncIterator[Any]:
    opened: list[ClientConnection] = []

    async def _open() -> FakePlugin:
        ws = await asyncio.wait_for(connect(network.url, max_size=None), WAIT)
        opened.append(ws)
        return FakePlugin(ws)

    yield _open
    for ws in opened:
        ws.transport.abort()


async def _link(open_plugin: Any, table: Table, server_id: str) -> FakePlugin:
    plugin: FakePlugin = await open_plugin()
    result, state = await plugin.handshake(server_id=server_id, token=TOKENS[server_id])
    assert result["type"] == "hello.result" and state["type"] == "link.state"
    await asyncio.wait_for(table.handlers[server_id].connected.wait(), WAIT)
    return plugin


async def _answer_players(plugin: FakePlugin, name: str) -> None:
    request = await plugin.recv()
    assert request["type"] == "players.list"
    players = [{"uuid": "0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1b", "name": name}]
    await plugin.send(frame("players.list.result", {"players": players}, re=request["id"]))


async def test_servers_link_side_by_side_and_requests_reach_their_own_plugin(
    network: LinkServer, table: Table, open_plugin: Any
) -> None:
    lobby = await _link(open_plugin, table, "lobby")
    survival = await _link(open_plugin, table, "survival")
    assert network.linked_servers == {"lobby", "survival"}
    # Each handler was given the link of its own server.
    asked = asyncio.create_task(network.link_for("survival").request("players.list", PlayersList()))
    await _answer_players(survival, "Alex")
    answer = await asyncio.wait_for(asked, WAIT)
    assert isinstance(answer, PlayersListResult) and answer.players[0].name == "Alex"
    asked = asyncio.create_task(network.link_for("lobby").request("players.list", PlayersList()))
    await _answer_players(lobby, "Steve")
    answer = await asyncio.wait_for(asked, WAIT)
    assert isinstance(answer, PlayersListResult) and answer.players[0].name == "Steve"
    assert [h.server_id for h in table.handlers["lobby"].hellos] == ["lobby"]
    assert not table.handlers[DEFAULT_SERVER_ID].hellos


async def test_a_second_connection_replaces_only_its_own_server(
    network: LinkServer, table: Table, open_plugin: Any
) -> None:
    lobby = await _link(open_plugin, table, "lobby")
    first_survival = await _link(open_plugin, table, "survival")
    table.handlers["survival"].connected.clear()
    await _link(open_plugin, table, "survival")
    assert await first_survival.closed_with() == 4004
    assert network.linked_servers == {"lobby", "survival"}
    assert not table.handlers["lobby"].disconnected.is_set()
    await lobby.send(frame("chat", _chat("@ai hi"), id="c-1"))
    verdict = await lobby.recv()
    assert verdict["type"] == "chat.result" and verdict["re"] == "c-1"


async def test_a_plugin_without_server_id_is_the_default_server(
    network: LinkServer, table: Table, open_plugin: Any
) -> None:
    plugin: FakePlugin = await open_plugin()
    result, _ = await plugin.handshake()
    assert result["type"] == "hello.result"
    await asyncio.wait_for(table.handlers[DEFAULT_SERVER_ID].connected.wait(), WAIT)
    assert network.connected and network.linked_servers == {DEFAULT_SERVER_ID}


@pytest.mark.parametrize(
    ("hello_args", "reason"),
    [
        # Another server's token under this id.
        ({"server_id": "lobby", "token": TOKENS["survival"]}, "token of server 'lobby'"),
        # An id the bridge does not know.
        ({"server_id": "creative", "token": TOKENS["lobby"]}, "'creative' is not in"),
        # A MAC made without the id, replayed with one: the id is part of the MAC.
        ({"server_id": "lobby", "token": TOKENS["lobby"], "mac_server_id": ""}, "'lobby'"),
        # The default token naming a configured server's id.
        ({"server_id": "lobby", "token": TOKEN}, "token of server 'lobby'"),
    ],
)
async def test_a_hello_with_the_wrong_token_for_its_id_is_refused_and_logged_without_secrets(
    network: LinkServer,
    table: Table,
    open_plugin: Any,
    caplog: pytest.LogCaptureFixture,
    hello_args: dict[str, Any],
    reason: str,
) -> None:
    caplog.set_level(logging.WARNING, logger="bridge.link.server")
    plugin: FakePlugin = await open_plugin()
    challenge = await plugin.recv()
    args = dict(hello_args)
    if args.get("mac_server_id") == "":
        args.pop("mac_server_id")
        args.pop("server_id")
        sent = json.loads(hello(challenge["data"]["nonce"], **args))
        sent["data"]["server_id"] = "lobby"  # added after the MAC was made without it
        await plugin.send(json.dumps(sent))
    else:
        await plugin.send(hello(challenge["data"]["nonce"], **args))
    error = await plugin.recv()
    assert error["type"] == "error" and error["data"]["code"] == "AUTH_FAILED"
    assert await plugin.closed_with() == 4001
    assert not network.linked_servers
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert reason in logged
    for token in TOKENS.values():
        assert token not in logged


async def test_a_server_this_bridge_does_not_serve_is_refused_with_4005(
    network: LinkServer, table: Table, open_plugin: Any
) -> None:
    table.not_served.add("lobby")
    plugin: FakePlugin = await open_plugin()
    challenge = await plugin.recv()
    await plugin.send(hello(challenge["data"]["nonce"], server_id="lobby", token=TOKENS["lobby"]))
    error = await plugin.recv()
    assert error["data"]["code"] == "UNAVAILABLE" and "next bridge" in error["data"]["message"]
    assert await plugin.closed_with() == 4005
    # The other servers are served as before.
    await _link(open_plugin, table, "survival")


async def test_dropping_a_server_closes_only_its_link(
    network: LinkServer, table: Table, open_plugin: Any
) -> None:
    lobby = await _link(open_plugin, table, "lobby")
    await _link(open_plugin, table, "survival")
    assert await network.drop("lobby", 4005, "another bridge serves this server now")  # type: ignore[arg-type]
    assert await lobby.closed_with() == 4005
    await asyncio.wait_for(table.handlers["lobby"].disconnected.wait(), WAIT)
    assert network.linked_servers == {"survival"}
    assert not await network.drop("lobby", 4005, "again")  # type: ignore[arg-type]


async def test_a_server_whose_connect_hangs_does_not_hold_up_another(
    network: LinkServer, table: Table, open_plugin: Any
) -> None:
    release = asyncio.Event()
    stuck = table.handlers["lobby"]
    original = stuck.on_connected

    async def slow_connect(link: Any, hello_: Any) -> None:
        await release.wait()
        await original(link, hello_)

    stuck.on_connected = slow_connect  # type: ignore[method-assign]
    lobby: FakePlugin = await open_plugin()
    await lobby.handshake(server_id="lobby", token=TOKENS["lobby"])
    survival = await _link(open_plugin, table, "survival")
    await survival.send(frame("chat", _chat("@ai hello"), id="c-9"))
    verdict = await survival.recv()
    assert verdict["type"] == "chat.result"
    assert not stuck.connected.is_set()
    release.set()
    await asyncio.wait_for(stuck.connected.wait(), WAIT)


def _chat(text: str) -> dict[str, Any]:
    player = {"uuid": "0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1b", "name": "Steve"}
    return {"player": player, "granted": ["mineclaw.command.chat"], "text": text}


@pytest.mark.parametrize("removed", [False, True])
async def test_a_revoked_token_gets_no_frame_served_and_its_link_is_closed(
    network: LinkServer, table: Table, open_plugin: Any, removed: bool
) -> None:
    lobby = await _link(open_plugin, table, "lobby")
    survival = await _link(open_plugin, table, "survival")
    recorded: list[Revoked] = []
    network.on_revoked = recorded.append
    # A reload changes lobby's token (or removes lobby); survival's stays.
    if removed:
        del table.tokens["lobby"]
    else:
        table.tokens["lobby"] = "N" * 43
    await lobby.send(chat("op me", id="after-reload"))
    assert await lobby.closed_with() == CloseCode.AUTH_FAILED
    reason = REVOKED_REMOVED if removed else REVOKED_CHANGED
    assert lobby.ws.close_reason == reason
    assert table.handlers["lobby"].chat_ids == []  # the frame was not served
    assert [(r.server_id, r.code, r.reason) for r in recorded] == [
        ("lobby", CloseCode.AUTH_FAILED, reason)
    ]
    await asyncio.wait_for(table.handlers["lobby"].disconnected.wait(), WAIT)
    assert network.revoke_stale() == []
    assert network.linked_servers == {"survival"}
    await survival.send(chat("hello", id="still"))
    assert (await survival.recv())["re"] == "still"


async def test_the_sweep_closes_an_idle_revoked_link_and_the_bridge_sends_it_nothing(
    network: LinkServer, table: Table, open_plugin: Any
) -> None:
    lobby = await _link(open_plugin, table, "lobby")
    survival = await _link(open_plugin, table, "survival")
    table.tokens["survival"] = "N" * 43
    with pytest.raises(LinkRequestError):
        await network.link_for("survival").request("players.list", PlayersList())
    assert await survival.closed_with() == CloseCode.AUTH_FAILED
    table.tokens["lobby"] = "M" * 43
    [revoked] = network.revoke_stale()
    assert revoked.server_id == "lobby" and revoked.reason == REVOKED_CHANGED
    assert await lobby.closed_with() == CloseCode.AUTH_FAILED
    # The plugin links again with the token in force.
    again: FakePlugin = await open_plugin()
    result, _ = await again.handshake(server_id="lobby", token="M" * 43)
    assert result["type"] == "hello.result"
