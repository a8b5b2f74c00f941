"""What kind of failure a provider fault is, whichever way it reached the bridge.

The same upstream fault arrives as an HTTP status with a JSON body, as an error object in the
middle of a stream (relayed by LiteLLM with ``"code": "500"``, by OpenRouter with
``"code": 502``), or as a ``finish_reason``. One classification serves them all, so the turn's
retries, the provider fallback and the line the player sees agree:

- ``busy``: rate limits, overloads, 5xx, broken connections. Worth another attempt.
- ``unreachable``: no connection could be made (refused, no route, no such host): the
  provider's server is down or not where the settings say. Worth another attempt (it may be
  restarting), but the player is not told it is busy.
- ``timed_out``: the provider did not answer in time. Worth another attempt.
- ``broken``: the stream ended early or had a shape the bridge cannot read. Worth another
  attempt (a model's next answer may be fine).
- ``quota``: the account is out of credit (``insufficient_quota``, 402). Will not heal.
- ``misconfigured``: bad key, unknown model, malformed request, bad URL. Will not heal.
- ``too_long``: the context is longer than the model takes. Will not heal.
- ``incomplete``: the answer was cut off (``length``, ``content_filter``). Will not heal.
- ``rejected``: the provider refused with an error the bridge does not know.
"""

from __future__ import annotations

from typing import Literal

from bridge.errors import ProviderError
from bridge.providers.errors import ProviderConnectError, ProviderTimeoutError

FailureClass = Literal[
    "busy",
    "unreachable",
    "timed_out",
    "broken",
    "quota",
    "misconfigured",
    "too_long",
    "incomplete",
    "rejected",
]

RETRYABLE_CLASSES: frozenset[FailureClass] = frozenset(
    {"busy", "unreachable", "timed_out", "broken"}
)
"""Another attempt at the same provider may succeed."""

FALLBACK_CLASSES: frozenset[FailureClass] = frozenset(
    {"busy", "unreachable", "timed_out", "broken", "quota", "misconfigured"}
)
"""Another provider may succeed where this one failed: its own capacity, credit and key.
A context too long or an answer cut off would fail the same way elsewhere."""

_QUOTA_CODES = frozenset(
    {"insufficient_quota", "billing_hard_limit_reached", "quota_exceeded", "payment_required"}
)
_TOO_LONG_CODES = frozenset(
    {
        "context_length_exceeded",
        "string_above_max_length",
        "request_too_large",
        "tokens_exceeded",
        "exceed_context_size_error",  # llama.cpp's llama-server
    }
)
_MISCONFIGURED_CODES = frozenset(
    {
        "invalid_api_key",
        "authentication_error",
        "unauthorized",
        "permission_denied",
        "permission_error",
        "invalid_authentication",
        "account_deactivated",
        "model_not_found",
        "not_found_error",
        "model_not_available",
        "invalid_request_error",
    }
)
_BUSY_CODES = frozenset(
    {
        "server_error",
        "internal_server_error",
        "internal_error",
        "rate_limit_exceeded",
        "rate_limit_error",
        "rate_limited",
        "too_many_requests",
        "overloaded",
        "overloaded_error",
        "service_unavailable",
        "bad_gateway",
        "api_error",
    }
)
_TIMEOUT_CODES = frozenset({"timeout", "request_timeout", "gateway_timeout"})
_QUOTA_WORDS = ("exceeded your current quota", "insufficient_quota", "insufficient credits")
_TOO_LONG_WORDS = (
    "context length",
    "context_length",
    "maximum context",
    "context window",
    "prompt is too long",
    "too many tokens",
    "exceeds the available context size",  # llama-server
    "exceed context window",  # llama-cpp-python: "Requested tokens (N) exceed context window of M"
)
# 4xx statuses that may heal: a code name never makes another 4xx worth retrying.
_RETRYABLE_4XX = frozenset({408, 409, 429})


def code_value(raw: object) -> str | None:
    """An error code as a comparable value: ``"500"``, ``500`` and ``500.0`` are the same code;
    names are compared without case or surrounding space."""
    if raw is None or isinstance(raw, bool):
        return None
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    text = str(raw).strip().lower()
    return text or None


def status_of(status: object, code: str | None) -> int | None:
    """The HTTP status an error stands for: its own, or a numeric code (relays put the
    upstream status there)."""
    if isinstance(status, int) and not isinstance(status, bool) and 100 <= status <= 599:
        return status
    if code is not None and code.isdigit() and len(code) == 3:
        return int(code)
    return None


def classify(status: object, code: object, message: str = "") -> FailureClass:
    """The class of an error a provider reported, by status, code and (last) message words.

    The status class decides first and a code only refines it: a 400 or 401 whose code or
    type names a busy-sounding class (``server_error``, ``api_error``, ``overloaded``) is
    still a request the server will refuse again, so it is not retried."""
    name = code_value(code)
    number = status_of(status, name)
    kind = _classify(number, name, message.lower())
    final_4xx = number is not None and 400 <= number < 500 and number not in _RETRYABLE_4XX
    if final_4xx and kind in ("busy", "timed_out"):
        return "misconfigured"
    return kind


def _classify(number: int | None, name: str | None, text: str) -> FailureClass:
    if name in _QUOTA_CODES or number == 402 or any(w in text for w in _QUOTA_WORDS):
        return "quota"
    if name in _TOO_LONG_CODES or number == 413 or any(w in text for w in _TOO_LONG_WORDS):
        return "too_long"
    if name in _TIMEOUT_CODES or number in (408, 504):
        return "timed_out"
    if name in _BUSY_CODES or number in (409, 429) or (number is not None and number >= 500):
        return "busy"
    if name in _MISCONFIGURED_CODES or (number is not None and 400 <= number < 500):
        return "misconfigured"
    return "rejected"


def classify_error(error: ProviderError | None, *, retryable: bool) -> FailureClass:
    """The class of a failure's error; without one, ``retryable`` decides between a broken
    stream and a refusal."""
    if error is None:
        return "broken" if retryable else "rejected"
    if isinstance(error, ProviderTimeoutError):
        return "timed_out"
    if isinstance(error, ProviderConnectError):
        return "unreachable" if retryable else "misconfigured"
    status = getattr(error, "status", None)
    code = getattr(error, "code", None)
    if status is not None or code is not None:
        return classify(status, code, str(error))
    return "broken" if retryable else "rejected"
