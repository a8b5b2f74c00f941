"""What a model request costs, whatever happened to it after the provider began to serve it.

A provider bills the prompt of every request it served and every token it streamed, whether the
answer then completed, broke off, was retried or was stopped by the player. The turn engine
keeps a `RequestMeter` per request: it counts the text each attempt streamed, keeps the
attempts that failed after they began to stream (their output was served, then thrown away)
and knows the attempt still running when a turn is stopped. `estimated_cost` prices one such
attempt the way the engine estimates any response the provider reported no usage for: the
calibrated prompt estimate plus the streamed text.

Purposes (`bridge.store.usage`): ``turn`` for an answer, ``turn.failed`` for a served attempt
that failed (a broken stream, retried or not), ``turn.stopped`` for the attempt a stop cut
short, ``compaction`` for a summary, ``memory.embedding`` for memory vectors,
``conversation.title`` for a private conversation's title.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bridge.providers.events import Completed
from bridge.turns.tokens import CHARS_PER_TOKEN

ANSWERED = "turn"
FAILED = "turn.failed"
STOPPED = "turn.stopped"
COMPACTION = "compaction"
EMBEDDING = "memory.embedding"
TITLE = "conversation.title"


@dataclass(slots=True)
class RequestMeter:
    """The attempts of one model request (its retries and fallbacks included)."""

    served_failures: list[int] = field(default_factory=list)
    """Characters each failed attempt had streamed, for those that streamed anything."""
    answer: Completed | None = None
    """The attempt that answered, with the usage its provider reported: a turn stopped after
    it (while its last frame went out, say) is billed that, not an estimate or nothing."""
    _streamed: int = 0
    _began_streaming: bool = False
    _running: bool = False

    def attempt_started(self) -> None:
        self._streamed, self._began_streaming, self._running = 0, False, True

    def text(self, delta: str) -> None:
        self._streamed += len(delta)
        self._began_streaming = True

    def reasoning(self) -> None:
        self._began_streaming = True

    def attempt_failed(self) -> None:
        """A failure after the stream began was served; one before it (a refused request, a
        busy server) was not."""
        if self._running and self._began_streaming:
            self.served_failures.append(self._streamed)
        self._running = False

    def attempt_answered(self, answer: Completed) -> None:
        self.answer = answer
        self._running = False

    @property
    def running(self) -> int | None:
        """Characters streamed by the attempt still running, None when none runs."""
        return self._streamed if self._running else None


def estimated_cost(prompt_tokens: int, streamed_chars: int) -> tuple[int, int]:
    """(input, output) tokens of a served attempt the provider reported nothing for."""
    return prompt_tokens, -(-streamed_chars // CHARS_PER_TOKEN)
