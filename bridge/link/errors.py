"""The link's errors that the layers above it catch: importing them must not pull in the
WebSocket server (a tool or a Function only needs to know why the plugin gave no answer)."""

from __future__ import annotations

from bridge.errors import LinkError
from bridge.link.codes import ErrorCode


class LinkRequestError(LinkError):
    """A request to the plugin got no answer; ``code`` says why (TIMEOUT, DISCONNECTED, ...)."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
