"""Codec cases the shared vectors cannot pin (the JSON Schema would disagree) or that need code."""

from __future__ import annotations

import json

import pytest

from bridge.errors import LinkError
from bridge.link.codec import DecodeFault, Frame, decode_frame, encode_frame
from bridge.link.codes import ErrorCode
from bridge.link.messages import ChatVerdict, Direction, OutputChat, Text

from .helpers import STEVE, chat, frame

P2B = Direction.PLUGIN_TO_BRIDGE


def fault(raw: str | bytes) -> DecodeFault:
    result = decode_frame(raw, P2B)
    assert isinstance(result, DecodeFault), result
    return result


@pytest.mark.parametrize("version", ["1.0", "1e0", "true"])
def test_v_must_be_the_json_integer_1(version: str) -> None:
    raw = chat().replace('"v": 1', f'"v": {version}')
    assert fault(raw).code is ErrorCode.INVALID_ENVELOPE


def test_a_data_fault_names_the_field_path() -> None:
    bad = {"player": {**STEVE, "uuid": "nope"}, "granted": [], "text": "hi"}
    found = fault(frame("chat", bad, id="c9"))
    assert found.code is ErrorCode.INVALID_DATA
    assert found.message.startswith("data.player.uuid:")
    assert found.frame_id == "c9"


def test_a_fault_message_is_clipped_to_512_characters() -> None:
    found = fault(frame("x" + "y" * 60, {}))
    assert found.code is ErrorCode.UNKNOWN_TYPE
    assert len(found.message) <= 512
    huge = fault(frame("chat", {"player": STEVE, "granted": ["z" * 5000], "text": "hi"}))
    assert len(huge.message) <= 512


def test_an_integer_too_long_to_convert_is_malformed_not_a_crash() -> None:
    raw = (
        '{"v":1,"id":"p","type":"output.chat.result","re":"b","data":{"delivered":'
        + "9" * 5000
        + "}}"
    )
    assert fault(raw).code is ErrorCode.MALFORMED_FRAME


def test_the_reply_carries_the_id_whenever_it_was_readable() -> None:
    assert fault(frame("chat.shout", {}, id="k1")).frame_id == "k1"
    assert fault(json.dumps({"v": 1, "id": "k2", "type": "chat"})).frame_id == "k2"
    assert fault(json.dumps({"v": 1, "id": "bad id", "type": "chat", "data": {}})).frame_id is None


def test_only_unpaired_surrogates_are_malformed() -> None:
    def with_escape(escape: str) -> str:
        return chat("@ai MARK").replace("MARK", escape)  # raw frame text, escapes unprocessed

    assert fault(with_escape("\\ud800 hi")).code is ErrorCode.MALFORMED_FRAME
    paired = decode_frame(with_escape("\\ud83d\\ude00"), P2B)
    assert isinstance(paired, Frame) and paired.data.text == "@ai \U0001f600"  # type: ignore[attr-defined]
    backslash_then_letters = decode_frame(with_escape("\\\\ud800"), P2B)
    assert isinstance(backslash_then_letters, Frame)


@pytest.mark.parametrize(
    "envelope",
    [
        {"id": 'a"b', "type": "chat.result"},
        {"id": "b-1", "type": "Chat"},
        {"id": "b-1", "type": "error", "re": "x y"},
    ],
)
def test_encoding_refuses_envelope_fields_that_would_need_escaping(
    envelope: dict[str, str],
) -> None:
    with pytest.raises(LinkError, match="out of its pattern"):
        encode_frame(data=ChatVerdict(decision="pass", ai_prefix=False, notice=None), **envelope)


def test_an_encoded_frame_round_trips_with_non_ascii_and_quotes() -> None:
    text = Text(template='é "quoted" \\ \U0001f600', values={"name": "<b>Steve</b>"})
    raw = encode_frame(id="b-7", type="output.chat", data=OutputChat(target="broadcast", text=text))
    decoded = decode_frame(raw, Direction.BRIDGE_TO_PLUGIN)
    assert isinstance(decoded, Frame) and decoded.data == OutputChat(target="broadcast", text=text)
