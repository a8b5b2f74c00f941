"""Streaming text to the asking player's action bar, throttled.

A frame goes out at most once per interval (about 75 ms by default) and holds the newest
characters of the answer, capped at ``chat.action_bar_max_chars``. Only a bounded tail of the
text is kept. A frame that cannot be delivered (link down) is skipped: the action bar is a
courtesy, the reply is what counts.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bridge.errors import MineclawError
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
    ) -> None:
        self._send = send
        self._max_chars = max_chars
        self._interval_s = interval_s
        self._monotonic = monotonic
        self._text = ""
        self._last_sent: float | None = None

    def reset(self) -> None:
        """Forget the text of a failed attempt; the next frame shows only the new one."""
        self._text = ""

    async def feed(self, delta: str) -> None:
        # Keep a little more than the cap: whitespace folding may shorten the tail.
        self._text = (self._text + delta)[-(self._max_chars * 2 + 64) :]
        now = self._monotonic()
        if self._last_sent is not None and now - self._last_sent < self._interval_s:
            return
        frame = action_bar_tail(self._text, self._max_chars)
        if not frame:
            return
        self._last_sent = now
        try:
            await self._send(frame)
        except MineclawError as exc:
            log.debug("action-bar frame skipped: %s", exc)
