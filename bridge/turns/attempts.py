"""At most N attempts of one model request, streaming text to a callback on the way.

A request is attempted again only when its stream ended with a retryable ``Failed`` (or
ended without any final event, which is a broken stream). The text of a failed attempt is
thrown away with it: the caller only ever keeps a ``Completed``. A provider client that
raises instead of yielding ``Failed`` is treated as a non-retryable failure.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from bridge.errors import MineclawError
from bridge.providers.events import Completed, Failed, TextDelta
from bridge.providers.items import ProviderRequest
from bridge.turns.ports import ModelStream

DEFAULT_RETRY_DELAYS_S = (0.5, 1.5)
"""Pause before the second and the third attempt (the last value repeats)."""


@dataclass(frozen=True, slots=True)
class AttemptsSpent:
    """Every attempt failed; ``failures`` holds one entry per attempt, oldest first."""

    failures: tuple[Failed, ...]

    @property
    def reason(self) -> str:
        return self.failures[-1].reason


TextSink = Callable[[str], Awaitable[None]]
FailureHook = Callable[[int, Failed], None]


async def _one_attempt(
    stream: ModelStream, request: ProviderRequest, on_text: TextSink | None
) -> Completed | Failed:
    events = stream(request)
    try:
        async for event in events:
            if isinstance(event, TextDelta):
                if on_text is not None:
                    await on_text(event.text)
            elif isinstance(event, Completed | Failed):
                return event
    except MineclawError as exc:
        return Failed(reason=str(exc) or type(exc).__name__, retryable=False)
    finally:
        # Stopping early (a final event, a cancelled turn) must close the HTTP stream at once.
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()
    return Failed(reason="the response stream ended without a final event", retryable=True)


async def complete(
    stream: ModelStream,
    request: ProviderRequest,
    *,
    attempts: int,
    sleep: Callable[[float], Awaitable[None]],
    retry_delays_s: Sequence[float] = DEFAULT_RETRY_DELAYS_S,
    on_text: TextSink | None = None,
    on_attempt_start: Callable[[int], Awaitable[None]] | None = None,
    on_failure: FailureHook | None = None,
) -> Completed | AttemptsSpent:
    failures: list[Failed] = []
    for attempt in range(1, max(1, attempts) + 1):
        if on_attempt_start is not None:
            await on_attempt_start(attempt)
        outcome = await _one_attempt(stream, request, on_text)
        if isinstance(outcome, Completed):
            return outcome
        failures.append(outcome)
        if on_failure is not None:
            on_failure(attempt, outcome)
        if not outcome.retryable or attempt >= attempts:
            break
        if retry_delays_s:
            await sleep(retry_delays_s[min(attempt - 1, len(retry_delays_s) - 1)])
    return AttemptsSpent(tuple(failures))
