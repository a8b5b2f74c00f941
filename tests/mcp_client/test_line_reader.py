"""The stdio reader's lines: split once per byte, each bounded, an oversized one dropped with
its head kept to tell whose answer it was."""

from __future__ import annotations

from bridge.mcp.line_reader import HEAD_BYTES, LineReader, Oversized


def test_lines_across_chunks_come_out_whole_and_in_order() -> None:
    reader = LineReader(limit=100)
    assert reader.feed(b'{"a":') == []
    assert reader.feed(b'1}\n{"b"') == [b'{"a":1}']
    assert reader.feed(b":2}\n\n{") == [b'{"b":2}', b""]
    assert reader.feed(b"}\n") == [b"{}"]


def test_a_line_over_the_limit_is_dropped_and_the_next_is_read() -> None:
    reader = LineReader(limit=10_000)
    start = b'{"jsonrpc":"2.0","id":7,"result":"'
    done = reader.feed(start)
    for _ in range(1_000):  # 64 MiB in 64 KiB chunks, never kept
        done += reader.feed(b"x" * 65_536)
    done += reader.feed(b'"}\n{"jsonrpc":"2.0","id":8,"result":{}}\n')
    [oversized, following] = done
    assert isinstance(oversized, Oversized)
    assert oversized.size == len(start) + 1_000 * 65_536 + 2
    assert len(oversized.head) == HEAD_BYTES and oversized.request_id() == 7
    assert following == b'{"jsonrpc":"2.0","id":8,"result":{}}'
    assert len(reader._pending) == 0


def test_the_id_of_an_oversized_line_is_read_from_its_head_only() -> None:
    assert Oversized(b'{"id": "a\\"b", "x', 10).request_id() == 'a\\"b'
    assert Oversized(b'{"jsonrpc":"2.0","result":"xxx', 10).request_id() is None
