"""At most N attempts of one model request, streaming text to a callback on the way.

Whether and when another attempt follows is decided by the one retry policy
(``bridge.providers.retry.retry_delay``), driven by the provider's ``retry`` settings: only a
failure that may heal is retried (never quota, a bad key, an unknown model or a context too
long), after the pause the provider asked for (``retry-after``, ``retry-after-ms``, LiteLLM's
``llm_provider-retry-after``) or a jittered backoff within the configured bounds. A stream that
ended without any final event counts as a broken stream. The text of a failed attempt is thrown
away with it: the caller only ever keeps a ``Completed``. A provider client that raises instead
of yielding ``Failed`` is treated as a non-retryable failure.

This is where provider text enters the turn, so it is made valid here (`bridge.unicode_text`):
a delta, an answer, reasoning or a tool call holding an unpaired surrogate would otherwise be
accepted into the session and make every later request of it fail to encode, and fail the
archive and the audit log on the way.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bridge.errors import MineclawError
from bridge.providers.events import Completed, Failed, ReasoningDelta, TextDelta
from bridge.providers.items import AssistantText, ProviderRequest, Reasoning, ToolCall
from bridge.providers.retry import retry_delay
from bridge.providers.settings import RetryPolicy
from bridge.turns.ports import ModelStream
from bridge.unicode_text import valid_json, valid_json_text, valid_text


@dataclass(frozen=True, slots=True)
class AttemptsSpent:
    """Every attempt failed; ``failures`` holds one entry per attempt, oldest first."""

    failures: tuple[Failed, ...]

    @property
    def reason(self) -> str:
        return self.failures[-1].reason


TextSink = Callable[[str], Awaitable[None]]
FailureHook = Callable[[int, Failed], None]
ReasoningHook = Callable[[], Awaitable[None]]
"""Told of each reasoning delta (its text is not shown to players)."""
ResponseItem = AssistantText | Reasoning | ToolCall


def valid_item(item: ResponseItem) -> ResponseItem:
    """``item`` with its text valid UTF-8 (the same object when it already was)."""
    if isinstance(item, AssistantText):
        text = valid_text(item.text)
        return item if text is item.text else AssistantText(text=text)
    if isinstance(item, Reasoning):
        text, opaque = valid_text(item.text), valid_json(item.opaque)
        if text is item.text and opaque is item.opaque:
            return item
        return item.model_copy(update={"text": text, "opaque": opaque})
    call_id, name = valid_text(item.call_id), valid_text(item.name)
    arguments, extra = valid_json_text(item.arguments), valid_json(item.extra)
    if (
        call_id is item.call_id
        and name is item.name
        and arguments is item.arguments
        and extra is item.extra
    ):
        return item
    return ToolCall(call_id=call_id, name=name, arguments=arguments, extra=extra)


def _valid_outcome(event: Completed | Failed) -> Completed | Failed:
    if isinstance(event, Failed):
        reason = valid_text(event.reason)
        return event if reason is event.reason else dataclasses.replace(event, reason=reason)
    items = tuple(valid_item(item) for item in event.items)
    if all(a is b for a, b in zip(items, event.items, strict=True)):
        return event
    return dataclasses.replace(event, items=items)


async def _one_attempt(
    stream: ModelStream,
    request: ProviderRequest,
    on_text: TextSink | None,
    on_reasoning: ReasoningHook | None = None,
) -> Completed | Failed:
    events = stream(request)
    try:
        async for event in events:
            if isinstance(event, TextDelta):
                if on_text is not None:
                    await on_text(valid_text(event.text))
            elif isinstance(event, ReasoningDelta):
                if on_reasoning is not None:
                    await on_reasoning()
            elif isinstance(event, Completed | Failed):
                return _valid_outcome(event)
    except (MineclawError, UnicodeError) as exc:
        # UnicodeError: a client of another kind that could not encode the history.
        return Failed(reason=valid_text(str(exc) or type(exc).__name__), retryable=False)
    finally:
        # Stopping early (a final event, a cancelled turn) must close the HTTP stream at once.
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()
    return Failed(
        reason="the response stream ended without a final event", retryable=True, kind="broken"
    )


async def complete(
    stream: ModelStream,
    request: ProviderRequest,
    *,
    policy: RetryPolicy,
    sleep: Callable[[float], Awaitable[None]],
    rng: random.Random | None = None,
    on_text: TextSink | None = None,
    on_attempt_start: Callable[[int], Awaitable[None]] | None = None,
    on_failure: FailureHook | None = None,
    on_reasoning: ReasoningHook | None = None,
) -> Completed | AttemptsSpent:
    failures: list[Failed] = []
    attempt = 0
    while True:
        attempt += 1
        if on_attempt_start is not None:
            await on_attempt_start(attempt)
        outcome = await _one_attempt(stream, request, on_text, on_reasoning)
        if isinstance(outcome, Completed):
            return outcome
        failures.append(outcome)
        if on_failure is not None:
            on_failure(attempt, outcome)
        delay = retry_delay(policy, attempt, outcome, rng=rng)
        if delay is None:
            return AttemptsSpent(tuple(failures))
        await sleep(delay)
