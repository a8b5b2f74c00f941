"""Several servers on one bridge (``bridge.app.network.network``): each its own session, listen
switch, gates and turn; one plane, archive and audit log for all; players followed across
servers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from support.fake_link import FakeLink
from websockets.asyncio.client import connect

from bridge.app.network.network import Network
from bridge.control import init_config_dir
from bridge.link.codes import CloseCode
from bridge.link.messages import (
    ApprovalButton,
    ApprovalShowResult,
    ChatRequest,
    CommandReply,
    CommandRequest,
    CommandSender,
    PlayerRef,
    PlayersListResult,
    Text,
    WireModel,
)
from bridge.link.protocol import DEFAULT_SERVER_ID
from bridge.link.server import REVOKED_REMOVED, LinkServer, LinkSettings, Revoked
from bridge.policy.approvals import Subject
from bridge.tools.registry import CallContext
from tests.link.conftest import FakePlugin
from tests.link.helpers import chat
from tests.storage_choice import apply_chosen_storage

from .conftest import ALEX, EVERY_NODE, STEVE, WAIT, app_link, hello, rendered, write_config
from .scripted_provider import ScriptedProvider

LOBBY_TOKEN = "l" * 43
SURVIVAL_TOKEN = "s" * 43
DEFAULT_TOKEN = "d" * 43


def _servers_yml(config: Path) -> None:
    (config / "servers.yml").write_text(
        "schema: 1\nservers:\n  lobby:\n    token: ${LOBBY_T}\n"
        "  survival:\n    token: ${SURVIVAL_T}\n"
    )


@pytest.fixture
async def network(tmp_path: Path, provider: ScriptedProvider) -> AsyncIterator[Network]:
    config = tmp_path / "config"
    write_config(config, provider.port)
    init_config_dir(config)
    apply_chosen_storage(config)
    _servers_yml(config)
    environ = {"LOBBY_T": LOBBY_TOKEN, "SURVIVAL_T": SURVIVAL_TOKEN}
    opened = Network.open(config, default_token=DEFAULT_TOKEN, environ=environ)
    yield opened
    await opened.aclose()


async def _link(network: Network, server_id: str) -> FakeLink:
    link = app_link()
    await network.handler(server_id).on_connected(link, hello())
    return link


async def _chat(network: Network, server_id: str, text: str, player: PlayerRef = STEVE) -> Any:
    request = ChatRequest(player=player, granted=EVERY_NODE, text=text)  # type: ignore[arg-type]
    return await network.handler(server_id).on_chat(request)


async def _command(network: Network, server_id: str, *args: str) -> list[str]:
    sender = CommandSender.model_validate(
        {"kind": "player", "player": STEVE, "granted": EVERY_NODE}
    )
    reply: CommandReply = await network.handler(server_id).on_command(
        CommandRequest(sender=sender, args=list(args))
    )
    return [rendered(line) for line in reply.lines]


def test_tokens_come_from_servers_yml_and_link_token(network: Network) -> None:
    assert network.token(DEFAULT_SERVER_ID) == DEFAULT_TOKEN
    assert network.token("lobby") == LOBBY_TOKEN
    assert network.token("survival") == SURVIVAL_TOKEN
    assert network.token("creative") is None


async def test_a_turn_streaming_on_one_server_leaves_the_others_free(
    network: Network, provider: ScriptedProvider
) -> None:
    lobby, survival = await _link(network, "lobby"), await _link(network, "survival")
    held = provider.held("slow ", "answer")
    verdict = await _chat(network, "lobby", "@ai tell me a long story")
    assert verdict.decision == "accept"
    await asyncio.wait_for(held.streaming.wait(), WAIT)
    # The lobby is busy with its turn (a wake there waits in the lobby's line); survival is
    # not, and answers at once.
    waiting = await _chat(network, "lobby", "@ai and another", player=ALEX)
    assert waiting.decision == "accept"
    assert [e.player.name for e in network.context("lobby").runtime.lanes.queue.waiting()] == [
        "Alex"
    ]
    assert network.context("survival").runtime.lanes.queue.waiting() == []
    provider.answer("survival answer")
    verdict = await _chat(network, "survival", "@ai hello", player=ALEX)
    assert verdict.decision == "accept"
    survival_turn = network.context("survival").runtime.turn
    assert survival_turn is not None
    await asyncio.wait_for(asyncio.shield(survival_turn), WAIT)
    await survival.wait_for(lambda name, data: name == "output.chat")
    assert not lobby.of("output.chat")  # the lobby's reply has not come, nor has survival's
    provider.answer("lobby's second answer")
    held.release.set()
    await lobby.wait_for(
        lambda name, data: name == "output.chat" and "second answer" in rendered(data.text)
    )
    # Separate public sessions: each holds only its own server's turn.
    lobby_session = network.context("lobby").runtime.session
    survival_session = network.context("survival").runtime.session
    assert lobby_session is not survival_session
    assert len(lobby_session.state.turns) == 2 and len(survival_session.state.turns) == 1
    assert "tell me a long story" in str(lobby_session.state.turns[0].items)
    assert "hello" in str(survival_session.state.turns[0].items)
    assert "long story" not in str(survival_session.state.turns[0].items)


async def test_listen_mode_is_per_server(network: Network) -> None:
    lobby, survival = await _link(network, "lobby"), await _link(network, "survival")
    lines = await _command(network, "lobby", "listen", "on")
    assert lines
    assert network.context("lobby").runtime.listen.on
    assert not network.context("survival").runtime.listen.on
    assert lobby.of("link.state")[-1].forward == "all"
    assert not survival.of("link.state") or survival.of("link.state")[-1].forward == "prefixed"


async def test_a_reload_from_one_server_sends_the_new_prefix_to_every_linked_server(
    network: Network,
) -> None:
    lobby, survival = await _link(network, "lobby"), await _link(network, "survival")
    config = network.default.runtime.plane.directory
    (config / "config.yml").write_text(
        "schema: 1\nchat:\n  public_prefix: '@bot'\n"
        "rate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
    )
    since = len(survival.sent)
    lines = await _command(network, "lobby", "reload")
    assert any("reload" in line.lower() for line in lines), lines
    state = await survival.wait_for(lambda name, data: name == "link.state", since=since)
    assert state.public_prefix == "@bot"
    assert lobby.of("link.state")[-1].public_prefix == "@bot"
    # Every server serves the new version, also one whose plugin is not linked (each adopts
    # in its own task: survival's link state says nothing about the unlinked default).
    await asyncio.wait_for(network.adoptions_done(), WAIT)
    assert {c.runtime.plane.version for c in network.contexts.values()} == {2}
    assert network.context("survival").runtime.wake_rules().public_prefix == "@bot"


async def test_a_player_moving_server_closes_their_prompts_on_the_old_one(
    network: Network,
) -> None:
    lobby_link = app_link({"approval.show": lambda data: ApprovalShowResult(shown=True)})
    await network.handler("lobby").on_connected(lobby_link, hello())
    await _link(network, "survival")
    await _chat(network, "lobby", "hello everyone", player=ALEX)  # Alex is on the lobby
    lobby = network.context("lobby")
    broker = lobby.app.link_tools.broker
    prompt = asyncio.ensure_future(
        broker.request(
            lobby_link,
            target=ALEX,
            subject=Subject("command", ALEX.uuid, "tp Alex 0 64 0"),
            prompt=Text(template="confirm?"),
            buttons=[
                ApprovalButton(
                    label=Text(template="yes"), hover=None, answer="approve", option=None
                )
            ],
        )
    )
    await lobby_link.wait_for(lambda name, data: name == "approval.show")
    assert broker.open_prompts == 1
    # Alex arrives on survival before the lobby reports the quit (two connections).
    await network.handler("survival").on_player_join(ALEX)
    outcome = await asyncio.wait_for(prompt, WAIT)
    assert outcome.status == "offline" and broker.open_prompts == 0
    assert network.server_of(ALEX.uuid) is network.context("survival")
    lobby.runtime.audit.flush()
    moved = lobby.runtime.audit.events("player.moved")
    assert [(e.fields["from"], e.fields["to"], e.fields["prompts_closed"]) for e in moved] == [
        ("lobby", "survival", 1)
    ]


async def test_a_server_with_its_own_files_serves_them_and_the_others_the_network_wide_ones(
    network: Network,
) -> None:
    config = network.default.runtime.plane.directory
    (config / "servers").mkdir()
    (config / "servers" / "lobby-whitelist.yml").write_text("schema: 1\nplayer:\n  - 'spawn'\n")
    (config / "servers" / "lobby-message.yml").write_text(
        "schema: 1\nchat:\n  empty_question: '<gray>Ask the lobby assistant after <prefix>.'\n"
    )
    (config / "servers.yml").write_text(
        "schema: 1\nservers:\n  lobby:\n    token: ${LOBBY_T}\n"
        "    whitelist: servers/lobby-whitelist.yml\n    messages: servers/lobby-message.yml\n"
        "  survival:\n    token: ${SURVIVAL_T}\n"
    )
    lobby_link = await _link(network, "lobby")
    await _link(network, "survival")
    since = len(lobby_link.sent)
    assert await _command(network, "survival", "reload")
    # The lobby serves the new version once its link state is sent.
    await lobby_link.wait_for(lambda name, data: name == "link.state", since=since)
    lobby, survival = network.context("lobby").runtime, network.context("survival").runtime
    assert lobby.plane.version == survival.plane.version == 2
    assert list(lobby.plane.whitelist_file.player) == ["spawn"]
    assert list(survival.plane.whitelist_file.player) == []
    # The lobby's lines are its own; survival keeps the network-wide ones.
    refused = await _chat(network, "lobby", "@ai")
    assert refused.notice is not None and "lobby" in rendered(refused.notice)
    refused = await _chat(network, "survival", "@ai")
    assert refused.notice is not None and "Ask a question" in rendered(refused.notice)


async def test_a_listen_opt_out_holds_on_every_server(network: Network) -> None:
    await _link(network, "lobby")
    await _link(network, "survival")
    for server in ("lobby", "survival"):
        assert any("is on" in line for line in await _command(network, server, "listen", "on"))
    assert "no longer sent" in (await _command(network, "lobby", "listen", "ignore-me"))[0]
    # Opted out on the lobby, so never sent on survival either, at once.
    verdict = await _chat(network, "survival", "my coordinates are 10 64 -20")
    assert (verdict.decision, verdict.ai_prefix) == ("pass", False)
    assert network.context("survival").runtime.listen.ignores(STEVE.uuid)


async def test_a_servers_own_lines_sit_over_the_locale_set(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    config = tmp_path / "config"
    write_config(config, provider.port, "schema: 1\nlocale: zh_CN\n")
    init_config_dir(config)
    (config / "servers").mkdir()
    (config / "servers" / "lobby-message.yml").write_text(
        "schema: 1\nchat:\n  empty_question: '<gray>Ask the lobby assistant after <prefix>.'\n"
    )
    (config / "servers.yml").write_text(
        "schema: 1\nservers:\n  lobby:\n    token: ${LOBBY_T}\n"
        "    messages: servers/lobby-message.yml\n"
    )
    opened = Network.open(config, default_token=DEFAULT_TOKEN, environ={"LOBBY_T": LOBBY_TOKEN})
    try:
        await _link(opened, "lobby")
        refused = await _chat(opened, "lobby", "@ai")
        assert refused.notice is not None and "lobby" in rendered(refused.notice)
        busy = opened.context("lobby").runtime.plane.messages.gates.busy
        assert "助手" in busy  # every line the lobby did not write comes from zh_CN
    finally:
        await opened.aclose()


async def test_snapshot_tools_read_the_server_the_player_is_on_now(network: Network) -> None:
    lobby = _RecordingLink()
    survival = _RecordingLink()
    await network.handler("lobby").on_connected(lobby, hello(features=("snapshots",)))
    await network.handler("survival").on_connected(survival, hello(features=("snapshots",)))
    await _chat(network, "lobby", "hello", player=ALEX)
    online_players = network.context("lobby").app.link_tools.handlers()["online_players"]
    call = CallContext(turn_id="t-1", call_id="c-1", player_uuid=ALEX.uuid, player_name="Alex")
    await online_players({}, call)
    assert [name for name, _ in lobby.sent if name == "players.list"] == ["players.list"]
    # Alex moves to survival while the lobby's turn is still running: the next look is there.
    await network.handler("survival").on_player_join(ALEX)
    await online_players({}, call)
    assert [name for name, _ in survival.sent if name == "players.list"] == ["players.list"]
    assert len([name for name, _ in lobby.sent if name == "players.list"]) == 1


class _RecordingLink(FakeLink):
    """Answers ``players.list`` with nobody online."""

    async def request(self, name: str, data: WireModel, *, timeout: float | None = None) -> Any:
        if name == "players.list":
            self._record(name, data)
            return PlayersListResult(players=[])
        return await super().request(name, data, timeout=timeout)


async def test_a_players_private_conversation_follows_them_across_servers(
    network: Network, provider: ScriptedProvider
) -> None:
    lobby, survival = await _link(network, "lobby"), await _link(network, "survival")

    async def ask(server_id: str, link: FakeLink, question: str, answer: str) -> list[str]:
        provider.answer(answer)
        since = len(link.sent)
        await _command(network, server_id, "ai", question)
        await link.wait_for(
            lambda name, data: name == "output.chat" and answer in rendered(data.text), since=since
        )
        lane = network.context(server_id).runtime.lanes.lanes.find_private(STEVE.uuid)
        if lane is not None and lane.task is not None:  # its commit, before Steve moves on
            await asyncio.wait_for(asyncio.shield(lane.task), WAIT)
        return [m["content"] for m in provider.bodies()[-1]["messages"] if m["role"] == "user"]

    assert await ask("lobby", lobby, "where is my base?", "At spawn.") == ["where is my base?"]
    # Steve moves to survival: his private lane there goes on from the lobby's.
    await network.handler("survival").on_player_join(STEVE)
    assert await ask("survival", survival, "and my chest?", "In the base.") == [
        "where is my base?",
        "and my chest?",
    ]
    # And back on the lobby, the lobby's lane has what he asked on survival too.
    await network.handler("lobby").on_player_join(STEVE)
    assert await ask("lobby", lobby, "thanks", "Welcome.") == [
        "where is my base?",
        "and my chest?",
        "thanks",
    ]
    # The public sessions stay each server's own.
    assert (
        network.context("lobby").runtime.session is not network.context("survival").runtime.session
    )


async def test_a_reload_that_removes_a_server_closes_its_real_link_before_it_is_served(
    network: Network,
) -> None:
    # The link server of `serve`, a real WebSocket over loopback, and a plugin that proved
    # lobby's token; a reload takes lobby out of servers.yml.
    revoked: list[Revoked] = []
    async with LinkServer(servers=network, settings=LinkSettings(port=0)) as server:
        server.on_revoked = revoked.append
        ws = await asyncio.wait_for(connect(server.url, max_size=None), WAIT)
        try:
            plugin = FakePlugin(ws)
            result, _ = await plugin.handshake(server_id="lobby", token=LOBBY_TOKEN)
            assert result["type"] == "hello.result"
            config = network.default.runtime.plane.directory
            (config / "servers.yml").write_text(
                "schema: 1\nservers:\n  survival:\n    token: ${SURVIVAL_T}\n"
            )
            lines = await _command(network, "survival", "reload")
            assert any("reload" in line.lower() for line in lines), lines
            # The next frame lobby's plugin sends is not served: the link closes instead.
            await plugin.send(chat("@ai op me", id="after"))
            assert await plugin.closed_with() == CloseCode.AUTH_FAILED
            assert ws.close_reason == REVOKED_REMOVED
            assert [(r.server_id, r.reason) for r in revoked] == [("lobby", REVOKED_REMOVED)]
        finally:
            ws.transport.abort()


async def test_a_reload_that_revokes_a_server_stops_its_running_and_waiting_turns_at_once(
    network: Network, provider: ScriptedProvider
) -> None:
    # A leaked token's plugin states any player and any node: the owner takes the server out
    # of servers.yml and reloads (from another server). Its link closes then, not at its next
    # frame, and its running and waiting turns stop: nothing runs for it after the reload (a
    # tool that needs no link, `remember` here, would still have kept a memory for "Alex").
    async with LinkServer(servers=network, settings=LinkSettings(port=0)) as server:
        network.watch_revocations(server)  # as serve does
        ws = await asyncio.wait_for(connect(server.url, max_size=None), WAIT)
        try:
            plugin = FakePlugin(ws)
            result, _ = await plugin.handshake(server_id="lobby", token=LOBBY_TOKEN)
            assert result["type"] == "hello.result"
            lobby = network.context("lobby").runtime
            held = provider.held("a long ", "story")
            await plugin.send(chat("@ai tell me a long story", id="steve"))
            await asyncio.wait_for(held.streaming.wait(), WAIT)
            provider.call_tools(("remember", {"text": "Alex's locker code is 4711"}))
            provider.answer("kept")
            waiting = await _chat(network, "lobby", "@ai remember my locker code 4711", ALEX)
            assert waiting.decision == "accept" and lobby.lanes.queue.waiting()
            running = lobby.turn
            assert running is not None
            asked = len(provider.requests)
            config = network.default.runtime.plane.directory
            (config / "servers.yml").write_text(
                "schema: 1\nservers:\n  survival:\n    token: ${SURVIVAL_T}\n"
            )
            assert any(
                "reload" in line.lower() for line in await _command(network, "survival", "reload")
            )
            # Done when the reload's reply is: before any other server has adopted the plane.
            assert lobby.lanes.queue.waiting() == []
            assert running.cancelling() or running.done()
            assert await plugin.closed_with() == CloseCode.AUTH_FAILED
            assert ws.close_reason == REVOKED_REMOVED
            await asyncio.wait({running}, timeout=WAIT)
            assert running.done()
            held.release.set()
            assert lobby.turn is None or lobby.turn.done()
            memories = network.default.runtime.memories
            assert memories is not None and memories.personal(ALEX.uuid) == []
            assert len(provider.requests) == asked
            audit = network.default.runtime.audit
            audit.flush()
            [record] = audit.events("link.revoked")
            assert record.fields["server"] == "lobby"
        finally:
            ws.transport.abort()


async def test_a_rotated_link_token_stops_the_default_servers_turns(
    network: Network, provider: ScriptedProvider
) -> None:
    # `serve` tells the network when its link token watch closed the default server's link
    # for a rotated link.token: what that link started stops as a revoked server's does.
    await _link(network, DEFAULT_SERVER_ID)
    default = network.default.runtime
    held = provider.held("a long ", "story")
    assert (await _chat(network, DEFAULT_SERVER_ID, "@ai tell me a story")).decision == "accept"
    await asyncio.wait_for(held.streaming.wait(), WAIT)
    await _chat(network, DEFAULT_SERVER_ID, "@ai and another", player=ALEX)
    running = default.turn
    assert running is not None and default.lanes.queue.waiting()
    network.rotated()
    assert default.lanes.queue.waiting() == []
    await asyncio.wait({running}, timeout=WAIT)
    held.release.set()
    assert running.done() and len(provider.requests) == 1
    default.audit.flush()
    [record] = default.audit.events("link.revoked")
    assert (record.fields["server"], record.fields["turns_stopped"]) == (DEFAULT_SERVER_ID, 1)
