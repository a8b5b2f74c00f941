"""The web package's errors; every one carries a short ``outcome`` for the audit and metrics::

WebError
├── ShieldRefused   the shield refused a URL or an address, naming its rule
├── FetchRefused    the answer is not something web_fetch reads (a PDF, an image, 404)
├── FetchFailed     the network failed (timeout, reset, TLS, DNS)
└── SearchFailed    the search backend failed or answered nonsense
"""

from __future__ import annotations

from bridge.errors import WebError


class ShieldRefused(WebError):
    """A URL or an address the shield will not connect to. ``rule`` is the stable rule id
    (``loopback``, ``port``, ``nat64-private``, ...)."""

    outcome = "refused"

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"refused by the web shield (rule {rule}): {message}")
        self.rule = rule


class FetchRefused(WebError):
    """The server answered, but not with something ``web_fetch`` reads; ``kind`` names why
    (``not_text``, ``http_status``, ``too_many_redirects``)."""

    outcome = "not_read"

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class FetchFailed(WebError):
    """The fetch could not complete: ``kind`` is ``timeout``, ``network`` or ``extraction``
    (the worker that reads pages failed before it had any text)."""

    outcome = "failed"

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class SearchFailed(WebError):
    """The search backend could not be asked or gave an answer that is not results;
    ``timed_out``: it did not answer within the search's deadline."""

    outcome = "failed"

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out
