"""A stdio server's output split into lines, each bounded, in time linear in the bytes read.

The SDK's own reader joins its whole pending text to every chunk and splits it again, so one
line of N bytes read in chunks costs N²/chunk on the event loop; a server answering 48 MiB held
every player. Here each byte is looked at once: a chunk is searched for newlines from where the
last search stopped, and a line that grows past ``limit`` bytes is not kept: its first
``HEAD_BYTES`` are, to tell whose answer it was, and the rest is counted and dropped up to its
newline, so the next line is read as if nothing happened.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEAD_BYTES = 4_096


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line that was over the limit: its first bytes and its length."""

    head: bytes
    size: int

    def request_id(self) -> int | str | None:
        """The JSON-RPC id near the start of the line, if one is there (a server's answer puts
        it before the result; the caller checks it names a request it is waiting for)."""
        found = _ID.search(self.head)
        if found is None:
            return None
        number, text = found.group(1), found.group(2)
        if number is not None:
            return int(number)
        return text.decode("utf-8", "replace") if text is not None else None


_ID = re.compile(rb'"id"\s*:\s*(?:(-?\d{1,18})\b|"((?:[^"\\]|\\.){0,128})")')


class LineReader:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._pending = bytearray()
        self._dropping: Oversized | None = None

    def feed(self, chunk: bytes) -> list[bytes | Oversized]:
        """The lines ``chunk`` completes, in order (a line's newline is not part of it)."""
        done: list[bytes | Oversized] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            self._take(piece)
            if end < 0:
                return done
            if self._dropping is not None:
                done.append(self._dropping)
                self._dropping = None
            else:
                done.append(bytes(self._pending))
            self._pending.clear()
            start = end + 1

    def _take(self, piece: bytes) -> None:
        if self._dropping is not None:
            self._dropping = Oversized(self._dropping.head, self._dropping.size + len(piece))
        elif len(self._pending) + len(piece) > self.limit:
            head = bytes(self._pending[:HEAD_BYTES])
            if len(head) < HEAD_BYTES:
                head += piece[: HEAD_BYTES - len(head)]
            self._dropping = Oversized(head, len(self._pending) + len(piece))
            self._pending.clear()
        else:
            self._pending += piece
