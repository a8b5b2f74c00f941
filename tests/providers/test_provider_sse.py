"""The sans-I/O event-stream decoder, fed every way a network can split bytes."""

from __future__ import annotations

import pytest

from bridge.providers import sse
from bridge.providers.errors import ProviderStreamError
from bridge.providers.sse import SSEDecoder

SAMPLE = (
    b": keep-alive comment\n"
    b"event: response.created\n"
    b'data: {"a": 1}\n'
    b"\n"
    b"data: line one\n"
    b"data:line two\n"
    b"id: 7\n"
    b"retry: 100\n"
    b"\n"
    b"event: error\r\n"
    b'data: {"error": {}}\r\n'
    b"\r\n"
    b"data\n"
    b"\n"
    b"data: [DONE]\r"
    b"\r"
)
EXPECTED = [
    ("response.created", b'{"a": 1}'),
    ("", b"line one\nline two"),
    ("error", b'{"error": {}}'),
    ("", b""),
    ("", b"[DONE]"),
]


def decode(chunks: list[bytes]) -> list[tuple[str, bytes]]:
    decoder = SSEDecoder()
    events = [e for chunk in chunks for e in decoder.feed(chunk)]
    events += decoder.close()
    return [(e.event, e.data) for e in events]


def test_whole_stream() -> None:
    assert decode([SAMPLE]) == EXPECTED


def test_every_two_way_split() -> None:
    for cut in range(len(SAMPLE) + 1):
        assert decode([SAMPLE[:cut], SAMPLE[cut:]]) == EXPECTED, cut


def test_byte_by_byte() -> None:
    assert decode([bytes([b]) for b in SAMPLE]) == EXPECTED


def test_blank_lines_without_data_dispatch_nothing() -> None:
    assert decode([b"\n\n\nevent: x\n\n\n"]) == []


def test_last_event_without_blank_line_is_still_read_at_close() -> None:
    assert decode([b"data: [DONE]"]) == [("", b"[DONE]")]


def test_endless_line_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sse, "MAX_LINE_BYTES", 1024)
    decoder = SSEDecoder()
    decoder.feed(b"data: " + b"x" * 1000)
    with pytest.raises(ProviderStreamError, match="exceeds 1024 bytes"):
        decoder.feed(b"x" * 100)
