"""Streaming text to the asking player's action bar, throttled.

A frame goes out at most once per interval (about 75 ms by default) and holds the newest
characters of the answer, capped at ``chat.action_bar_max_chars``. A frame that cannot be
delivered (link down) is skipped: the action bar is a courtesy, the reply is what counts.

The frame is cut from the attempt's whole text after that text was redacted, and only up to
its last whitespace: a secret still arriving is no secret yet to any rule, so its unfinished
word waits for the next frame (and a tail kept short would start inside a secret).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bridge.errors import MineclawError
from bridge.redaction import complete_words
from bridge.turns.output_text import action_bar_tail

log = logging.getLogger(__name__)


class ActionBarStream:
    def __init__(
        self,
        send: Callable[[str], Awaitable[None]],
        *,
        max_chars: int,
        interval_s: float,
        monotonic: Callable[[], float],
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self._send = send
        self._redact = redact
        self._max_chars = max_chars
        self._interval_s = interval_s
        self._monotonic = monotonic
        self._text = ""
        self._last_sent: float | None = None

    def reset(self) -> None:
        """Forget the text of a failed attempt; the next frame shows only the new one."""
        self._text = ""

    async def feed(self, delta: str) -> None:
        self._text += delta
        now = self._monotonic()
        if self._last_sent is not None and now - self._last_sent < self._interval_s:
            return
        shown = self._text
        if self._redact is not None:
            shown = self._redact(complete_words(shown))
        frame = action_bar_tail(shown, self._max_chars)
        if not frame:
            return
        self._last_sent = now
        try:
            await self._send(frame)
        except MineclawError as exc:
            log.debug("action-bar frame skipped: %s", exc)
