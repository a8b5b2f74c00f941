"""Errors of the provider clients.

Every fault on the way to and from a model provider becomes one of these, with the library
error (httpx, json) chained as ``__cause__``::

    ProviderError                      (bridge.errors)
    ├── ProviderConnectError           no connection could be made
    ├── ProviderTimeoutError           connect, read or write took too long
    ├── ProviderStatusError            the server answered with a non-2xx status
    ├── ProviderStreamError            the SSE stream broke, ended early or was not SSE/JSON
    └── ProviderResponseError          the provider reported an error inside the stream

The message of an error is short and safe to show: it never holds an API key, a header value
or a full response body, only the status, the provider's error code and a clipped message. The
client redacts ``unclipped`` and clips only then: a key cut in half by the clip no longer looks
like a key, and its first half would otherwise pass as ordinary text.
"""

from __future__ import annotations

from bridge.errors import ProviderError

# A provider error message is clipped to this many characters before it reaches any text.
MAX_MESSAGE_CHARS = 300
# What an error keeps of its text before the clip, for redaction (the body read is bounded too).
MAX_UNCLIPPED_CHARS = 64 * 1024

# Statuses worth another attempt: the request may succeed unchanged a moment later.
RETRYABLE_STATUSES = frozenset({408, 409, 429})


def clip(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """Shorten ``text`` to one bounded line, so a provider cannot flood a log or a chat."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUSES or status >= 500


class ProviderTransportError(ProviderError):
    """Base of the faults below; ``retryable`` says whether the same request may succeed."""

    retryable: bool = True

    def __init__(self, message: str, *, retryable: bool | None = None) -> None:
        super().__init__(clip(message))
        self.unclipped = message[:MAX_UNCLIPPED_CHARS]
        if retryable is not None:
            self.retryable = retryable


class ProviderConnectError(ProviderTransportError):
    """The provider could not be reached."""


class ProviderTimeoutError(ProviderTransportError):
    """The provider did not answer within the configured timeout."""


class ProviderStreamError(ProviderTransportError):
    """The response stream broke, ended before its final event, or could not be parsed."""


class ProviderStatusError(ProviderTransportError):
    """The provider answered with an error status; ``code`` is its error code when it sent one."""

    def __init__(self, status: int, code: str | None, message: str) -> None:
        self.status = status
        self.code = code
        text = f"HTTP {status}" + (f" {code}" if code else "") + (f": {message}" if message else "")
        super().__init__(text, retryable=is_retryable_status(status))


class ProviderResponseError(ProviderTransportError):
    """The provider reported an error inside an otherwise healthy stream."""

    def __init__(
        self, message: str, *, code: str | None = None, status: int | None = None, retryable: bool
    ) -> None:
        self.code = code
        self.status = status
        prefix = f"{code}: " if code else ""
        super().__init__(prefix + message, retryable=retryable)
