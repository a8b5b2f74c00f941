"""A sans-I/O reader for ``text/event-stream``: feed it bytes, get complete events back.

It follows the WHATWG event-stream rules that matter for model providers: lines end in LF,
CRLF or CR (a CR ends its line as soon as it arrives); ``event:`` names the next event;
``data:`` lines are joined with LF; a blank line dispatches; ``:`` starts a comment; ``id:``
and ``retry:`` are ignored because the bridge never resumes a stream. Data stays bytes so the
protocol reader can hand it to ``json.loads`` without a decode step.
"""

from __future__ import annotations

from bridge.providers.errors import ProviderStreamError

# Longest line accepted while waiting for its end: a stream that never sends a newline would
# otherwise grow the buffer without bound. Real events (a completed response carrying every
# encrypted reasoning item) stay far below this.
MAX_LINE_BYTES = 16 * 1024 * 1024


class ServerSentEvent:
    """One dispatched event: ``event`` is its name ("" when the stream gave none)."""

    __slots__ = ("event", "data")

    def __init__(self, event: str, data: bytes) -> None:
        self.event = event
        self.data = data

    def __repr__(self) -> str:
        return f"ServerSentEvent(event={self.event!r}, data={self.data[:60]!r})"


class SSEDecoder:
    """Incremental event-stream decoder. ``feed`` may be called with any split of the bytes."""

    __slots__ = ("_pending", "_event", "_data", "_lines", "_skip_lf")

    def __init__(self) -> None:
        self._pending = b""
        # The previous chunk ended in CR: that CR already ended its line, so an LF starting
        # this chunk is the second half of a CRLF, not a blank line.
        self._skip_lf = False
        self._event = ""
        self._data: list[bytes] = []
        self._lines = 0

    @property
    def lines_read(self) -> int:
        """Complete lines seen so far; errors use it to say where a stream went wrong."""
        return self._lines

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[0] == 0x0A:
                chunk = chunk[1:]
        if self._pending:
            chunk = self._pending + chunk
        if b"\r" in chunk:
            # A CR at the very end ends its line at once (a server using CR-only line endings
            # must not have its last event held until more bytes come); it may be the first
            # half of a CRLF split across two chunks, so an LF right after it is skipped.
            self._skip_lf = chunk.endswith(b"\r")
            lines = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
            self._pending = lines.pop()
        else:
            lines = chunk.split(b"\n")
            self._pending = lines.pop()
        if len(self._pending) > MAX_LINE_BYTES:
            raise ProviderStreamError(
                f"event-stream line {self._lines + 1} exceeds {MAX_LINE_BYTES} bytes"
            )
        self._lines += len(lines)
        events: list[ServerSentEvent] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    joined = data[0] if len(data) == 1 else b"\n".join(data)
                    events.append(ServerSentEvent(self._event, joined))
                    data.clear()
                self._event = ""
            elif line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
            elif line.startswith(b"event:"):
                self._event = line[6:].strip().decode("utf-8", "replace")
            elif line[0] == 0x3A:  # ":" comment, used by some servers as a keep-alive
                continue
            elif line == b"data":
                data.append(b"")
            # Any other field (id, retry, unknown) is ignored, as the standard says.
        return events

    def close(self) -> list[ServerSentEvent]:
        """End of stream: a final event without its blank line is dispatched, as browsers do
        not; providers sometimes omit the last blank line, and the reader decides whether the
        stream is complete anyway."""
        events = self.feed(b"\n\n") if (self._pending or self._data) else []
        self._pending = b""
        return events
