"""The link server over real loopback WebSockets: handshake, hardening, correlation."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

import pytest
from websockets.exceptions import InvalidStatus

from bridge.link.codes import CloseCode, ErrorCode
from bridge.link.errors import LinkRequestError
from bridge.link.messages import (
    OutputActionbar,
    OutputChatResult,
    PlayersList,
    PlayersListResult,
)
from bridge.link.protocol import DEFAULT_SERVER_ID
from bridge.link.server import LinkServer, LinkServerError, LinkSettings
from tests.link.placeholder import COMMAND_UNAVAILABLE, NOT_CONFIGURED

from .conftest import WAIT, FakePlugin, RecordingHandler
from .helpers import STEVE, TOKEN, chat, frame, hello

# ---- handshake


async def test_the_handshake_completes_and_the_handler_learns_the_hello(
    connect_plugin: Any, handler: RecordingHandler, server: LinkServer
) -> None:
    fake: FakePlugin = await connect_plugin()
    result, state = await fake.handshake()
    assert result["type"] == "hello.result" and result["re"] == "p-hello"
    assert state["type"] == "link.state" and state["data"]["public_prefix"] == "@ai"
    await asyncio.wait_for(handler.connected.wait(), WAIT)
    assert handler.hellos[0].platform == "testkit"
    assert server.connected


@pytest.mark.parametrize(
    ("hello_args", "code", "close"),
    [
        ({"token": "w" * 43}, "AUTH_FAILED", CloseCode.AUTH_FAILED),
        ({"major": 2}, "UNSUPPORTED_VERSION", CloseCode.UNSUPPORTED_VERSION),
    ],
    ids=["wrong-mac", "wrong-major"],
)
async def test_a_bad_hello_is_refused_and_closed_without_logging_the_token(
    connect_plugin: Any,
    handler: RecordingHandler,
    caplog: pytest.LogCaptureFixture,
    hello_args: dict[str, Any],
    code: str,
    close: int,
) -> None:
    caplog.set_level(logging.DEBUG)
    fake: FakePlugin = await connect_plugin()
    challenge = await fake.recv()
    await fake.send(hello(challenge["data"]["nonce"], **hello_args))
    error = await fake.recv()
    assert error["type"] == "error" and error["data"]["code"] == code
    assert await fake.closed_with() == close
    assert "refused" in caplog.text
    assert TOKEN not in caplog.text
    assert not handler.connected.is_set()


async def test_a_replayed_hello_is_refused(connect_plugin: Any) -> None:
    first: FakePlugin = await connect_plugin()
    challenge = await first.recv()
    captured = hello(challenge["data"]["nonce"])
    await first.send(captured)
    assert (await first.recv())["type"] == "hello.result"
    second: FakePlugin = await connect_plugin()
    await second.recv()
    await second.send(captured)
    assert (await second.recv())["data"]["code"] == "AUTH_FAILED"
    assert await second.closed_with() == CloseCode.AUTH_FAILED


async def test_a_frame_before_hello_gets_not_ready_and_closes(connect_plugin: Any) -> None:
    fake: FakePlugin = await connect_plugin()
    await fake.recv()
    await fake.send(chat())
    assert (await fake.recv())["data"]["code"] == "NOT_READY"
    assert await fake.closed_with() == CloseCode.HANDSHAKE_FAILED


@pytest.mark.parametrize("settings", [LinkSettings(port=0, handshake_timeout=0.2)])
async def test_a_silent_peer_is_closed_when_the_handshake_times_out(
    connect_plugin: Any, settings: LinkSettings
) -> None:
    fake: FakePlugin = await connect_plugin()
    assert (await fake.recv())["type"] == "hello.challenge"
    assert await fake.closed_with() == CloseCode.HANDSHAKE_FAILED
    assert fake.ws.close_reason == "handshake timeout"


# ---- hardening


async def test_the_default_bind_is_loopback(handler: RecordingHandler) -> None:
    assert LinkSettings().host == "127.0.0.1"
    async with LinkServer(token=TOKEN, handler=handler, settings=LinkSettings(port=0)) as server:
        assert server.url.startswith("ws://127.0.0.1:")


async def test_a_browser_origin_is_refused_before_the_upgrade(server: LinkServer) -> None:
    from websockets.asyncio.client import connect

    with pytest.raises(InvalidStatus) as refused:
        await asyncio.wait_for(connect(server.url, origin="http://localhost:8080"), WAIT)  # type: ignore[arg-type]
    assert refused.value.response.status_code == 403


async def test_another_path_is_not_found(server: LinkServer) -> None:
    from websockets.asyncio.client import connect

    with pytest.raises(InvalidStatus) as refused:
        await asyncio.wait_for(connect(server.url.replace("/link", "/other")), WAIT)
    assert refused.value.response.status_code == 404


async def test_compression_is_not_negotiated(connect_plugin: Any) -> None:
    fake: FakePlugin = await connect_plugin(compression="deflate")
    assert fake.ws.response is not None
    assert "Sec-WebSocket-Extensions" not in fake.ws.response.headers


@pytest.mark.parametrize("settings", [LinkSettings(port=0, max_frame_bytes=4096)])
async def test_a_frame_over_the_cap_closes_with_1009(
    plugin: FakePlugin, handler: RecordingHandler
) -> None:
    await plugin.send(chat("@ai " + "x" * 5000))
    assert await plugin.closed_with() == CloseCode.MESSAGE_TOO_BIG
    await asyncio.wait_for(handler.disconnected.wait(), WAIT)


async def test_the_default_cap_takes_a_full_chat_and_refuses_64_kib(plugin: FakePlugin) -> None:
    await plugin.send(chat("@ai " + "\U0001f600" * 4092, id="big"))  # 16 KiB of UTF-8, valid
    verdict = await plugin.recv()
    assert verdict["type"] == "chat.result" and verdict["re"] == "big"
    await plugin.send(chat("x" * 65536))
    assert await plugin.closed_with() == CloseCode.MESSAGE_TOO_BIG


@pytest.mark.parametrize(
    "settings", [LinkSettings(port=0, ping_interval=0.1, ping_timeout=0.1, close_timeout=0.1)]
)
async def test_a_peer_that_stops_answering_pings_is_dropped(
    plugin: FakePlugin, handler: RecordingHandler
) -> None:
    plugin.ws.transport.pause_reading()
    await asyncio.wait_for(handler.disconnected.wait(), WAIT)


@pytest.mark.parametrize("settings", [LinkSettings(port=0, write_timeout=0.5)])
async def test_a_peer_that_stops_reading_is_cut_when_a_write_stalls(
    plugin: FakePlugin, handler: RecordingHandler, server: LinkServer, caplog: Any
) -> None:
    # Its socket fills, so the keepalive ping cannot be written either and its timeout never
    # starts: before the write timeout the link stayed open for as long as the peer was hung.
    plugin.ws.transport.pause_reading()
    line = OutputActionbar.model_validate(
        {"player": STEVE["uuid"], "text": {"template": "x" * 2000}}
    )

    async def write_until_cut() -> None:
        while not handler.disconnected.is_set():
            with contextlib.suppress(LinkRequestError):
                await server.send_event("output.actionbar", line)
            await asyncio.sleep(0)  # a closed link fails a send without suspending

    with caplog.at_level(logging.WARNING, logger="bridge.link.server"):
        await asyncio.wait_for(write_until_cut(), WAIT)
        await asyncio.wait_for(handler.disconnected.wait(), WAIT)
    assert "took in nothing for 0.5 s (write timeout)" in caplog.text


async def test_malformed_frames_get_errors_and_the_link_stays_up(plugin: FakePlugin) -> None:
    await plugin.send("{not json")
    await plugin.send(b"\x00binary")
    await plugin.send(frame("chat.shout", {}, id="s1"))
    await plugin.send(frame("chat", {"text": 5}, id="s2"))
    codes = [(await plugin.recv())["data"]["code"] for _ in range(4)]
    assert codes == ["MALFORMED_FRAME", "MALFORMED_FRAME", "UNKNOWN_TYPE", "INVALID_DATA"]
    await plugin.send(chat("hello", id="after"))
    verdict = await plugin.recv()
    assert verdict["re"] == "after" and verdict["data"]["decision"] == "pass"


async def test_a_failing_handler_answers_internal_and_the_link_stays_up(
    plugin: FakePlugin, handler: RecordingHandler
) -> None:
    handler.fail_chat = True
    await plugin.send(chat(id="boom"))
    error = await plugin.recv()
    assert error["re"] == "boom" and error["data"]["code"] == "INTERNAL"
    assert "handler bug" not in json.dumps(error)
    handler.fail_chat = False
    await plugin.send(chat("hi", id="ok"))
    assert (await plugin.recv())["re"] == "ok"


@pytest.mark.parametrize("settings", [LinkSettings(port=0, request_timeout=0.05)])
async def test_a_stuck_handler_is_given_up_on_with_unavailable(
    plugin: FakePlugin, handler: RecordingHandler, settings: LinkSettings
) -> None:
    handler.stall_chat = True
    await plugin.send(chat(id="stuck"))
    error = await plugin.recv()
    assert error["re"] == "stuck" and error["data"]["code"] == "UNAVAILABLE"
    handler.stall_chat = False
    await plugin.send(chat("hi", id="next"))
    assert (await plugin.recv())["re"] == "next"


# ---- the placeholder handler


async def test_prefixed_chat_is_accepted_then_the_placeholder_reply_is_broadcast(
    plugin: FakePlugin,
) -> None:
    await plugin.send(chat("@ai what time is it", id="c1"))
    verdict = await plugin.recv()
    assert verdict["re"] == "c1"
    assert verdict["data"] == {"decision": "accept", "ai_prefix": False, "notice": None}
    reply = await plugin.recv()
    assert reply["type"] == "output.chat" and reply["data"]["target"] == "broadcast"
    assert reply["data"]["text"]["template"] == NOT_CONFIGURED
    await plugin.send(frame("output.chat.result", {"delivered": 1}, id="a1", re=reply["id"]))


async def test_ordinary_chat_passes_and_commands_say_not_available(plugin: FakePlugin) -> None:
    await plugin.send(chat("good morning", id="c1"))
    assert (await plugin.recv())["data"]["decision"] == "pass"
    command = {"sender": {"kind": "player", "player": STEVE, "granted": []}, "args": ["status"]}
    await plugin.send(frame("command", command, id="m1"))
    answer = await plugin.recv()
    assert answer["type"] == "command.result" and answer["re"] == "m1"
    assert answer["data"]["lines"] == [{"template": COMMAND_UNAVAILABLE}]


async def test_a_chat_the_plugin_stopped_waiting_for_reaches_the_handler_by_its_id(
    plugin: FakePlugin, handler: RecordingHandler
) -> None:
    await plugin.send(chat("good morning", id="c7"))
    assert (await plugin.recv())["re"] == "c7"
    assert handler.chat_ids == ["c7"]
    await plugin.send(frame("chat.expired", {"request": "c7"}, id="e1"))
    assert await asyncio.wait_for(handler.expired.get(), WAIT) == "c7"


# ---- the bridge's own requests


async def test_concurrent_requests_are_matched_with_their_answers(
    plugin: FakePlugin, server: LinkServer
) -> None:
    first = asyncio.create_task(server.request("players.list", PlayersList()))
    second = asyncio.create_task(server.request("players.list", PlayersList()))
    a, b = await plugin.recv(), await plugin.recv()
    await plugin.send(frame("players.list.result", {"players": [STEVE]}, id="r2", re=b["id"]))
    await plugin.send(frame("players.list.result", {"players": []}, id="r1", re=a["id"]))
    answers = await asyncio.wait_for(asyncio.gather(first, second), WAIT)
    assert answers == [
        PlayersListResult(players=[]),
        PlayersListResult.model_validate({"players": [STEVE]}),
    ]


async def test_an_error_frame_fails_the_request_with_its_code(
    plugin: FakePlugin, server: LinkServer
) -> None:
    pending = asyncio.create_task(server.request("players.list", PlayersList()))
    request = await plugin.recv()
    await plugin.send(
        frame("error", {"code": "UNAVAILABLE", "message": "busy"}, id="e", re=request["id"])
    )
    with pytest.raises(LinkRequestError) as failed:
        await asyncio.wait_for(pending, WAIT)
    assert failed.value.code is ErrorCode.UNAVAILABLE


async def test_an_unanswered_request_times_out_and_its_late_answer_is_unexpected(
    plugin: FakePlugin, server: LinkServer
) -> None:
    with pytest.raises(LinkRequestError) as failed:
        await server.request("players.list", PlayersList(), timeout=0.05)
    assert failed.value.code is ErrorCode.TIMEOUT
    request = await plugin.recv()
    await plugin.send(frame("players.list.result", {"players": []}, id="late", re=request["id"]))
    error = await plugin.recv()
    assert error["data"]["code"] == "UNEXPECTED_ANSWER" and error["re"] == "late"


async def test_a_cancelled_request_is_forgotten_and_its_late_answer_is_unexpected(
    plugin: FakePlugin, server: LinkServer
) -> None:
    pending = asyncio.create_task(server.request("players.list", PlayersList()))
    request = await plugin.recv()
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    await plugin.send(frame("players.list.result", {"players": []}, id="late", re=request["id"]))
    error = await plugin.recv()
    assert error["data"]["code"] == "UNEXPECTED_ANSWER" and error["re"] == "late"


async def test_a_cancellation_arriving_with_the_answer_still_cancels_the_caller(
    plugin: FakePlugin, server: LinkServer
) -> None:
    pending = asyncio.create_task(server.request("players.list", PlayersList()))
    request = await plugin.recv()
    await plugin.send(frame("players.list.result", {"players": []}, id="a", re=request["id"]))
    # Let the answer resolve the request's future, then cancel before the caller resumes:
    # the caller must see the cancellation, not the answer.
    for _ in range(1000):
        current = server._current.get(DEFAULT_SERVER_ID)
        if pending.done() or current is None or not current.pending:
            break
        await asyncio.sleep(0)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending


async def test_requests_in_flight_fail_with_disconnected_when_the_link_drops(
    plugin: FakePlugin, server: LinkServer, handler: RecordingHandler
) -> None:
    pending = asyncio.create_task(server.request("players.list", PlayersList()))
    await plugin.recv()
    await plugin.ws.close()
    with pytest.raises(LinkRequestError) as failed:
        await asyncio.wait_for(pending, WAIT)
    assert failed.value.code is ErrorCode.DISCONNECTED
    await asyncio.wait_for(handler.disconnected.wait(), WAIT)
    with pytest.raises(LinkRequestError) as down:
        await server.request("players.list", PlayersList())
    assert down.value.code is ErrorCode.DISCONNECTED


async def test_a_newer_connection_replaces_the_older_with_4004(
    plugin: FakePlugin, connect_plugin: Any, server: LinkServer
) -> None:
    newer: FakePlugin = await connect_plugin()
    await newer.handshake(instance_id="0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1b")
    assert await plugin.closed_with() == CloseCode.REPLACED
    pending = asyncio.create_task(server.request("output.chat", _broadcast()))
    request = await newer.recv()
    await newer.send(frame("output.chat.result", {"delivered": 2}, id="d", re=request["id"]))
    assert await asyncio.wait_for(pending, WAIT) == OutputChatResult(delivered=2)


async def test_an_unauthenticated_connection_does_not_replace_the_linked_one(
    plugin: FakePlugin, connect_plugin: Any, server: LinkServer
) -> None:
    intruder: FakePlugin = await connect_plugin()
    challenge = await intruder.recv()
    await intruder.send(hello(challenge["data"]["nonce"], token="w" * 43))
    assert (await intruder.recv())["data"]["code"] == "AUTH_FAILED"
    assert await intruder.closed_with() == CloseCode.AUTH_FAILED
    await plugin.send(chat("hi", id="still"))
    assert (await plugin.recv())["re"] == "still"


async def test_closing_the_server_closes_the_link_normally(
    plugin: FakePlugin, server: LinkServer
) -> None:
    await asyncio.wait_for(server.close(), WAIT)
    assert await plugin.closed_with() == CloseCode.NORMAL


def _broadcast() -> Any:
    from bridge.link.messages import OutputChat, Text

    return OutputChat(target="broadcast", text=Text(template="hello"))


async def test_a_port_in_use_is_reported_as_a_link_error(
    server: LinkServer, handler: RecordingHandler
) -> None:
    taken = LinkSettings(port=server.port)
    with pytest.raises(LinkServerError, match=f"127.0.0.1:{server.port}"):
        await LinkServer(token=TOKEN, handler=handler, settings=taken).start()


@pytest.mark.parametrize("settings", [LinkSettings(port=0, close_timeout=60)])
async def test_an_unresponsive_old_connection_does_not_hold_up_its_replacement(
    plugin: FakePlugin, connect_plugin: Any, settings: LinkSettings
) -> None:
    plugin.ws.transport.pause_reading()  # it will never acknowledge its 4004 close
    newer: FakePlugin = await connect_plugin()
    await newer.handshake(instance_id="0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1b")
    await newer.send(chat("hi", id="fresh"))
    assert (await newer.recv())["re"] == "fresh"


async def test_closing_the_server_closes_a_connection_still_in_the_handshake_normally(
    connect_plugin: Any, server: LinkServer
) -> None:
    fake: FakePlugin = await connect_plugin()
    assert (await fake.recv())["type"] == "hello.challenge"
    await asyncio.wait_for(server.close(), WAIT)
    assert await fake.closed_with() == CloseCode.NORMAL
