"""When and how long to wait before retrying one request.

Only faults that happened before any byte of the response stream was read are retried here:
connect errors, timeouts, and the statuses 408, 409, 429 and 5xx. The server's own
``retry-after-ms`` or ``retry-after`` wins when present and within the cap; otherwise the wait
is a jittered exponential backoff.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Mapping

from bridge.providers.settings import RetryPolicy


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
        return None
    raw = raw.strip()
    if raw.isdigit():
        return float(raw)
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - now())


def backoff_s(policy: RetryPolicy, attempt: int, *, rng: random.Random | None = None) -> float:
    """Jittered exponential backoff before attempt ``attempt + 1`` (``attempt`` counts from 1)."""
    growth = 2.0 ** min(attempt - 1, 30)
    ceiling = min(float(policy.max_backoff_ms), policy.initial_backoff_ms * growth)
    jitter = float((rng or random).uniform(0.5, 1.0))
    return ceiling * jitter / 1000.0


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
