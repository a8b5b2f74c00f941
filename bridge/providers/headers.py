"""The HTTP headers of a provider request.

The key goes only into a standard ``Authorization: Bearer`` header. Configured extra headers
may use ``${session_id}`` and ``${user_agent}``, resolved for each request; they can never
replace ``Authorization``. Providers whose id starts with ``opencode`` always get the
User-Agent and an ``x-opencode-session`` header with the public session's id, whatever the
configuration says for that header.
"""

from __future__ import annotations

import re

from bridge import __version__
from bridge.providers.errors import ProviderTransportError
from bridge.providers.settings import ProviderSettings

DEFAULT_USER_AGENT = f"mineclaw-bridge/{__version__}"
OPENCODE_SESSION_HEADER = "x-opencode-session"
_PLACEHOLDER = re.compile(r"\$\{[A-Za-z_]+\}")
_RESERVED = frozenset({"authorization", "content-type", "content-length", "host"})


class ProviderHeaderError(ProviderTransportError):
    """A header could not be built; the message names the header, never its value."""

    retryable = False


def _resolve(template: str, session_id: str, user_agent: str) -> str:
    return template.replace("${session_id}", session_id).replace("${user_agent}", user_agent)


class HeaderBuilder:
    """Builds the headers of each request of one provider."""

    def __init__(self, settings: ProviderSettings) -> None:
        self._user_agent = settings.user_agent or DEFAULT_USER_AGENT
        self._extra = dict(settings.extra_headers)
        self._opencode = settings.provider_id.startswith("opencode")
        self._key = settings.api_key.get_secret_value()
        # No key (a local server without one): no Authorization at all. "Bearer " alone is
        # not a valid header value, and the HTTP client refuses to send it.
        self._authorization = f"Bearer {self._key}" if self._key.strip() else None

    @property
    def user_agent(self) -> str:
        return self._user_agent

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values that must never appear in an error text: the key and every configured header
        value long enough to be a credential (templates cut at their first placeholder)."""
        values = [self._key]
        for template in self._extra.values():
            values.extend(part for part in _PLACEHOLDER.split(template) if len(part) >= 8)
        return tuple(v for v in values if v)

    def build(self, session_id: str) -> dict[str, str]:
        headers: dict[str, str] = {"user-agent": self._user_agent}
        for name, template in self._extra.items():
            lowered = name.lower()
            if lowered in _RESERVED:
                continue
            headers[lowered] = _resolve(template, session_id, self._user_agent)
        if self._opencode:
            headers["user-agent"] = self._user_agent
            headers[OPENCODE_SESSION_HEADER] = session_id
        if self._authorization is not None:
            headers["authorization"] = self._authorization
        headers["accept"] = "text/event-stream"
        headers["content-type"] = "application/json"
        for name, value in headers.items():
            if "\r" in value or "\n" in value or "\0" in value:
                raise ProviderHeaderError(f"header {name!r} would contain a line break")
        return headers
