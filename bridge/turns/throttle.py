"""Streaming text to the asking player's action bar, throttled.

A frame goes out at most once per interval (about 75 ms by default) and holds the newest
characters of the answer, capped at ``chat.action_bar_max_chars``. A frame that cannot be
delivered (link down) is skipped: the action bar is a courtesy, the reply is what counts.

The frame is cut from the attempt's whole text after that text was redacted, and only up to
its last whitespace, less any tail that could be the beginning of a configured secret
(``redact_partial``, `bridge.redaction.Redactor.redact_partial`): a secret still arriving is no
secret yet to any rule, so its unfinished word, or the first words of a passphrase, wait for
the next frame (and a tail kept short would start inside a secret). Once the
attempt's stream is complete, ``flush`` sends what the throttle held back, the last word
included: nothing more is coming, so the whole text is redacted as it is.

While the model reasons before writing any text, the thinking frame (``reply.thinking``) is
shown, again every ``thinking_refresh_s`` while the reasoning goes on (the game clears an
action bar after a few seconds).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bridge.errors import MineclawError
from bridge.redaction import complete_words
from bridge.turns.output_text import action_bar_tail

log = logging.getLogger(__name__)

THINKING_REFRESH_S = 1.5


class ActionBarStream:
    def __init__(
        self,
        send: Callable[[str], Awaitable[None]],
        *,
        max_chars: int,
        interval_s: float,
        monotonic: Callable[[], float],
        redact: Callable[[str], str] | None = None,
        redact_partial: Callable[[str], str] | None = None,
        thinking: Callable[[], Awaitable[None]] | None = None,
        thinking_refresh_s: float = THINKING_REFRESH_S,
    ) -> None:
        self._send = send
        self._redact = redact
        if redact_partial is None and redact is not None:
            redact_partial = lambda text: redact(complete_words(text))  # noqa: E731
        self._redact_partial = redact_partial
        self._thinking = thinking
        self._thinking_refresh_s = thinking_refresh_s
        self._max_chars = max_chars
        self._interval_s = interval_s
        self._monotonic = monotonic
        self._text = ""
        self._last_sent: float | None = None
        self._shown = ""
        self._thought_at: float | None = None

    def reset(self) -> None:
        """Forget the text of a failed attempt; the next frame shows only the new one."""
        self._text = ""
        self._shown = ""
        self._thought_at = None

    async def reasoning(self) -> None:
        """The model is reasoning: show the thinking frame unless its text already streams."""
        if self._thinking is None or self._text:
            return
        now = self._monotonic()
        if self._thought_at is not None and now - self._thought_at < self._thinking_refresh_s:
            return
        self._thought_at = now
        try:
            await self._thinking()
        except MineclawError as exc:
            log.debug("thinking frame skipped: %s", exc)

    async def feed(self, delta: str) -> None:
        self._text += delta
        now = self._monotonic()
        if self._last_sent is not None and now - self._last_sent < self._interval_s:
            return
        shown = self._text
        if self._redact_partial is not None:
            shown = self._redact_partial(shown)
        await self._show(action_bar_tail(shown, self._max_chars), now)

    async def flush(self) -> None:
        """The attempt's stream is complete: show its whole text if a frame held any back."""
        shown = self._text if self._redact is None else self._redact(self._text)
        frame = action_bar_tail(shown, self._max_chars)
        if frame != self._shown:
            await self._show(frame, self._monotonic())

    async def _show(self, frame: str, now: float) -> None:
        if not frame:
            return
        self._last_sent = now
        self._shown = frame
        try:
            await self._send(frame)
        except MineclawError as exc:
            log.debug("action-bar frame skipped: %s", exc)
