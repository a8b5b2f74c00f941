"""The one retry policy: whether and how long to wait before another attempt.

Both the client's own pre-stream retries and the turn's attempts ask ``retry_delay``. A failure
is retried only when its class may heal (busy, timed out, broken stream; never quota, a bad
key, an unknown model or a context too long) and attempts remain. The server's own
``retry-after-ms``, ``retry-after`` or LiteLLM's ``llm_provider-retry-after`` wins when present
and within ``max_retry_after_ms`` (past it the failure is final: waiting longer would hold the
whole server); otherwise the wait is a jittered exponential backoff between
``initial_backoff_ms`` and ``max_backoff_ms``.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from bridge.providers.failures import RETRYABLE_CLASSES
from bridge.providers.settings import RetryPolicy

if TYPE_CHECKING:
    from bridge.providers.events import Failed


class RetryAfterTooLong(Exception):
    """The server asked for a longer pause than the policy allows; not a bridge error, the
    caller turns it into the request's failure."""


def server_delay_s(
    headers: Mapping[str, str], *, now: Callable[[], float] = time.time
) -> float | None:
    """The pause the server asked for, in seconds, or None when it asked for none we can read."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            value = float(raw_ms)
        except ValueError:
            value = -1.0
        if value >= 0 and value == value:  # NaN never equals itself
            return value / 1000.0
    raw = headers.get("retry-after")
    if raw is None:
        raw = headers.get("llm_provider-retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if seconds >= 0 and seconds == seconds and seconds != float("inf"):
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - now())


def backoff_s(policy: RetryPolicy, attempt: int, *, rng: random.Random | None = None) -> float:
    """Jittered exponential backoff before attempt ``attempt + 1`` (``attempt`` counts from 1):
    uniform between ``initial_backoff_ms`` and twice the previous ceiling, never past
    ``max_backoff_ms``. The jitter keeps many bridges behind one gateway from retrying in step."""
    low = float(policy.initial_backoff_ms)
    growth = 2.0 ** min(attempt, 30)
    high = max(low, min(float(policy.max_backoff_ms), low * growth))
    return float((rng or random).uniform(low, high)) / 1000.0


def delay_before_retry(
    policy: RetryPolicy,
    attempt: int,
    headers: Mapping[str, str] | None = None,
    *,
    rng: random.Random | None = None,
) -> float:
    """Seconds to wait after failed attempt ``attempt``; raises RetryAfterTooLong past the cap."""
    if headers is not None:
        asked = server_delay_s(headers)
        if asked is not None:
            if asked * 1000.0 > policy.max_retry_after_ms:
                raise RetryAfterTooLong(f"server asked to wait {asked:.1f} s")
            return asked
    return backoff_s(policy, attempt, rng=rng)


def retry_delay(
    policy: RetryPolicy, attempt: int, failed: Failed, *, rng: random.Random | None = None
) -> float | None:
    """Seconds to wait before another attempt after failed attempt ``attempt``, or None when
    there is to be none: the failure will not heal, the attempts are spent, or the server asked
    for a longer pause than the policy allows."""
    if not failed.retryable or failed.failure_class not in RETRYABLE_CLASSES:
        return None
    if attempt >= max(1, policy.max_attempts):
        return None
    headers = getattr(failed.error, "retry_headers", None)
    try:
        return delay_before_retry(policy, attempt, headers, rng=rng)
    except RetryAfterTooLong:
        return None
