"""The sans-I/O core: handshake, correlation and faults, without sockets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from bridge.errors import LinkError
from bridge.link.codes import CloseCode, ErrorCode
from bridge.link.messages import (
    ChatVerdict,
    CommandReply,
    LinkState,
    OutputChat,
    PlayersList,
    Text,
)
from bridge.link.protocol import (
    AnswerReceived,
    EventReceived,
    FaultAnswered,
    FrameTooLargeError,
    HandshakeCompleted,
    HandshakeFailed,
    LinkProtocol,
    NotOpenError,
    PeerErrorReported,
    RequestFailed,
    RequestReceived,
    State,
)

from .helpers import STEVE, TOKEN, chat, frame, hello, parse

VECTOR_DIR = Path(__file__).resolve().parents[2] / "docs" / "protocol" / "vectors"
PASS = ChatVerdict(decision="pass", ai_prefix=False, notice=None)
STATE = LinkState(forward="prefixed", public_prefix="@ai")


def new_core(**settings: int) -> tuple[LinkProtocol, str]:
    core = LinkProtocol(token=TOKEN, link_state=STATE, **settings)
    [challenge] = [parse(f) for f in core.data_to_send()]
    assert challenge["type"] == "hello.challenge"
    nonce: str = challenge["data"]["nonce"]
    return core, nonce


def open_core(**settings: int) -> LinkProtocol:
    core, nonce = new_core(**settings)
    core.receive(hello(nonce))
    core.data_to_send()
    core.events_received()
    assert core.state is State.OPEN
    return core


def sent(core: LinkProtocol) -> list[dict[str, object]]:
    return [parse(f) for f in core.data_to_send()]


def error_codes(frames: list[dict[str, object]]) -> list[object]:
    return [f["data"]["code"] for f in frames if f["type"] == "error"]  # type: ignore[index]


# ---- handshake


def test_each_connection_gets_a_fresh_43_character_nonce() -> None:
    _, first = new_core()
    _, second = new_core()
    assert len(first) == 43 and len(second) == 43
    assert first != second


def test_a_good_hello_is_answered_then_link_state_follows() -> None:
    core, nonce = new_core()
    core.receive(hello(nonce, id="h1"))
    result, state = sent(core)
    assert result["type"] == "hello.result" and result["re"] == "h1"
    assert result["data"]["session_id"] == core.session_id  # type: ignore[index]
    assert state["type"] == "link.state"
    assert state["data"] == {"forward": "prefixed", "public_prefix": "@ai"}
    [event] = core.events_received()
    assert isinstance(event, HandshakeCompleted)
    assert event.hello.platform == "testkit"
    assert core.state is State.OPEN and core.close_code is None


@pytest.mark.parametrize(
    ("make_hello", "code", "close", "logged"),
    [
        (lambda n: hello(n, token="w" * 43), "AUTH_FAILED", CloseCode.AUTH_FAILED, "MAC"),
        (lambda n: hello("A" * 43), "AUTH_FAILED", CloseCode.AUTH_FAILED, "nonce"),
        (lambda n: hello(n, major=2), "UNSUPPORTED_VERSION", CloseCode.UNSUPPORTED_VERSION, "2.0"),
        (
            lambda n: hello(n).replace('"v": 1', '"v": 2'),
            "UNSUPPORTED_VERSION",
            CloseCode.UNSUPPORTED_VERSION,
            "version 2",
        ),
        (lambda n: chat(), "NOT_READY", CloseCode.HANDSHAKE_FAILED, "hello first"),
        (lambda n: "{not json", "MALFORMED_FRAME", CloseCode.HANDSHAKE_FAILED, "not JSON"),
        (
            lambda n: hello(n).replace('"testkit"', '"spigot"'),
            "INVALID_DATA",
            CloseCode.HANDSHAKE_FAILED,
            "platform",
        ),
    ],
    ids=["wrong-mac", "replayed-nonce", "major-2", "envelope-v2", "chat-first", "garbage", "bad"],
)
def test_a_bad_first_frame_is_answered_and_closes(
    make_hello: object, code: str, close: CloseCode, logged: str
) -> None:
    core, nonce = new_core()
    core.receive(make_hello(nonce))  # type: ignore[operator]
    frames = sent(core)
    assert error_codes(frames) == [code]
    assert core.state is State.CLOSED and core.close_code == close
    [failure] = core.events_received()
    assert isinstance(failure, HandshakeFailed) and failure.code == code
    assert logged in failure.reason
    assert TOKEN not in failure.reason and TOKEN not in json.dumps(frames)


def test_a_hello_captured_on_one_connection_fails_on_the_next() -> None:
    first, nonce = new_core()
    captured = hello(nonce)
    first.receive(captured)
    assert first.state is State.OPEN
    second, _ = new_core()
    second.receive(captured)
    assert second.close_code == CloseCode.AUTH_FAILED


def test_a_second_hello_on_an_open_link_is_refused_and_the_link_stays_up() -> None:
    core, nonce = new_core()
    core.receive(hello(nonce))
    core.data_to_send()
    core.receive(hello(nonce, id="again"))
    [error] = sent(core)
    assert error["data"]["code"] == "UNAVAILABLE" and error["re"] == "again"  # type: ignore[index]
    assert core.state is State.OPEN


def test_nothing_can_be_sent_before_the_handshake() -> None:
    core, _ = new_core()
    with pytest.raises(NotOpenError):
        core.send_request("players.list", PlayersList())


# ---- requests from the plugin


def test_a_chat_request_is_delivered_and_answered_once() -> None:
    core = open_core()
    core.receive(chat(id="c1"))
    [request] = core.events_received()
    assert isinstance(request, RequestReceived) and request.type == "chat"
    assert request.data.text == "@ai hi"  # type: ignore[attr-defined]
    core.send_answer("c1", PASS)
    [answer] = sent(core)
    assert answer["type"] == "chat.result" and answer["re"] == "c1"
    with pytest.raises(LinkError, match="awaits"):
        core.send_answer("c1", PASS)


def test_only_frames_to_write_or_a_close_count_as_data_to_send() -> None:
    core = open_core()
    core.receive(chat(id="c1"))
    assert not core.has_data_to_send
    core.send_answer("c1", PASS)
    assert core.has_data_to_send
    core.data_to_send()
    core.close()
    assert core.has_data_to_send and core.data_to_send() == []


def test_an_answer_of_the_wrong_model_is_refused_locally() -> None:
    core = open_core()
    core.receive(chat(id="c1"))
    with pytest.raises(LinkError, match="ChatVerdict"):
        core.send_answer("c1", CommandReply(lines=[]))


def test_a_duplicate_id_in_flight_is_refused_and_reusable_after_the_answer() -> None:
    core = open_core()
    core.receive(chat(id="same"))
    core.receive(chat(id="same"))
    [error] = sent(core)
    assert error["data"]["code"] == "DUPLICATE_ID" and error["re"] == "same"  # type: ignore[index]
    assert len(core.events_received()) == 2  # the request, then the fault for the log
    core.send_answer("same", PASS)
    core.receive(chat(id="same"))
    assert isinstance(core.events_received()[-1], RequestReceived)


def test_too_many_requests_in_flight_get_unavailable() -> None:
    core = open_core(max_requests_in_flight=2)
    for n in range(3):
        core.receive(chat(id=f"c{n}"))
    assert error_codes(sent(core)) == ["UNAVAILABLE"]


def test_an_answer_too_large_for_the_peer_is_refused_and_can_be_replaced_by_an_error() -> None:
    core = open_core(max_frame_bytes=300)
    core.receive(chat(id="c1"))
    big = ChatVerdict(decision="refuse", ai_prefix=False, notice=Text(template="x" * 400))
    with pytest.raises(FrameTooLargeError, match="300-byte cap"):
        core.send_answer("c1", big)
    core.send_error("c1", ErrorCode.INTERNAL, "the verdict was too large")
    assert error_codes(sent(core)) == ["INTERNAL"]


def test_local_only_codes_are_never_sent() -> None:
    core = open_core()
    core.receive(chat(id="c1"))
    with pytest.raises(LinkError, match="local only"):
        core.send_error("c1", ErrorCode.TIMEOUT, "late")


def test_events_are_delivered_and_need_no_answer() -> None:
    core = open_core()
    core.receive(frame("player.join", {"player": STEVE}, id="j1"))
    [event] = core.events_received()
    assert isinstance(event, EventReceived) and event.type == "player.join"
    assert sent(core) == []


# ---- requests to the plugin


def test_our_request_is_matched_with_its_answer() -> None:
    core = open_core()
    request_id = core.send_request("players.list", PlayersList())
    [request] = sent(core)
    assert request["type"] == "players.list" and request["id"] == request_id
    core.receive(frame("players.list.result", {"players": [STEVE]}, id="a1", re=request_id))
    [answer] = core.events_received()
    assert isinstance(answer, AnswerReceived) and answer.re == request_id
    assert core.requests_in_flight == frozenset()


def test_an_error_frame_fails_our_request_with_its_code() -> None:
    core = open_core()
    request_id = core.send_request(
        "output.chat", OutputChat(target="player", player=STEVE["uuid"], text=Text(template="x"))
    )
    core.receive(
        frame("error", {"code": "PLAYER_OFFLINE", "message": "gone"}, id="e", re=request_id)
    )
    [failed] = core.events_received()
    assert failed == RequestFailed(request_id, ErrorCode.PLAYER_OFFLINE, "gone")
    assert sent(core)[1:] == []  # only our request went out; errors are never answered


def test_an_answer_to_nothing_in_flight_is_unexpected() -> None:
    core = open_core()
    core.receive(frame("output.chat.result", {"delivered": 1}, id="a1", re="b-999"))
    [error] = sent(core)
    assert error["data"]["code"] == "UNEXPECTED_ANSWER" and error["re"] == "a1"  # type: ignore[index]
    assert isinstance(core.events_received()[0], FaultAnswered)


def test_an_answer_of_another_type_is_unexpected_and_the_request_stays_in_flight() -> None:
    core = open_core()
    request_id = core.send_request("players.list", PlayersList())
    core.data_to_send()
    core.receive(frame("output.chat.result", {"delivered": 1}, id="a1", re=request_id))
    assert error_codes(sent(core)) == ["UNEXPECTED_ANSWER"]
    assert core.requests_in_flight == {request_id}


def test_a_malformed_answer_fails_our_request_and_is_reported_to_the_peer() -> None:
    core = open_core()
    request_id = core.send_request("players.list", PlayersList())
    core.data_to_send()
    core.receive(frame("players.list.result", {"players": "all"}, id="a1", re=request_id))
    assert error_codes(sent(core)) == ["INVALID_DATA"]
    failed = [e for e in core.events_received() if isinstance(e, RequestFailed)]
    assert failed[0].re == request_id and failed[0].code is ErrorCode.INVALID_DATA
    assert core.requests_in_flight == frozenset()


def test_a_late_answer_after_a_timeout_is_unexpected() -> None:
    core = open_core()
    request_id = core.send_request("players.list", PlayersList())
    core.data_to_send()
    assert core.forget_request(request_id)
    core.receive(frame("players.list.result", {"players": []}, id="a1", re=request_id))
    assert error_codes(sent(core)) == ["UNEXPECTED_ANSWER"]


def test_errors_are_never_answered_even_when_malformed_or_unmatched() -> None:
    core = open_core()
    core.receive(frame("error", {"code": "INTERNAL", "message": "x"}, id="e1", re="b-77"))
    core.receive(frame("error", {"code": "NOPE", "message": "x"}, id="e2"))
    assert sent(core) == []
    events = core.events_received()
    assert [type(e) for e in events] == [PeerErrorReported, PeerErrorReported]


def test_losing_the_connection_fails_every_request_in_flight() -> None:
    core = open_core()
    ids = {core.send_request("players.list", PlayersList()) for _ in range(3)}
    core.connection_lost()
    failed = core.events_received()
    assert {e.re for e in failed if isinstance(e, RequestFailed)} == ids
    assert all(e.code is ErrorCode.DISCONNECTED for e in failed if isinstance(e, RequestFailed))
    with pytest.raises(NotOpenError):
        core.send_request("players.list", PlayersList())


# ---- faults on an open link


def test_binary_frames_get_malformed_frame_and_the_link_stays_up() -> None:
    core = open_core()
    core.receive(b'{"v":1}')
    assert error_codes(sent(core)) == ["MALFORMED_FRAME"]
    assert core.state is State.OPEN


def _plugin_error_vectors() -> list[Path]:
    paths = []
    for path in sorted(VECTOR_DIR.glob("*.json")):
        vector = json.loads(path.read_text(encoding="utf-8"))
        if path.name != "hmac.json" and vector["direction"] == "plugin_to_bridge":
            if "error" in vector["expect"] and '"type":"error"' not in vector["frame"]:
                paths.append(path)
    return paths


@pytest.mark.parametrize("path", _plugin_error_vectors(), ids=lambda p: p.stem)
def test_every_bad_vector_gets_exactly_one_error_and_the_link_stays_up(path: Path) -> None:
    vector = json.loads(path.read_text(encoding="utf-8"))
    core = open_core()
    core.receive(vector["frame"])
    frames = sent(core)
    assert error_codes(frames) == [vector["expect"]["error"]]
    assert core.state is State.OPEN
    core.receive(chat(id="after"))
    assert isinstance(core.events_received()[-1], RequestReceived)


def test_models_refuse_text_that_is_not_unicode_so_no_frame_can_fail_to_encode() -> None:
    with pytest.raises(ValidationError, match="surrogate|unicode"):
        Text(template="half \ud83d")
