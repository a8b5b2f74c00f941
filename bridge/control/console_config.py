"""``config.yml``'s ``console`` section: the owner's web console (docs/console.md).

Off by default. Bound to loopback unless the owner says otherwise, and then only with TLS
(``tls_cert`` and ``tls_key``) or with ``behind_proxy: true``, the explicit statement that a
TLS reverse proxy on this machine is what the browser talks to.
"""

from __future__ import annotations

import ipaddress
import re

from pydantic import Field, field_validator, model_validator

from bridge.control.base import StrictModel

DEFAULT_CONSOLE_PORT = 25590


def is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def checked_host(value: str) -> str:
    """A listening address's field check (``link.host``, ``console.host``)."""
    if not re.fullmatch(r"[A-Za-z0-9.:\-\[\]]+", value):
        raise ValueError("must be a host name or an IP address")
    return value


class ConsoleConfig(StrictModel):
    """Where the console listens and how long its links and sessions last."""

    enabled: bool = False
    host: str = Field(default="127.0.0.1", min_length=1, max_length=253)
    port: int = Field(default=DEFAULT_CONSOLE_PORT, ge=1, le=65_535)
    tls_cert: str | None = Field(default=None, min_length=1, max_length=4096)
    """PEM certificate chain for https:// (relative to the configuration folder)."""
    tls_key: str | None = Field(default=None, min_length=1, max_length=4096)
    behind_proxy: bool = False
    """A non-loopback ``host`` without TLS is refused unless this says a TLS reverse proxy
    fronts the console (the session cookie is then marked Secure all the same)."""
    login_link_minutes: int = Field(default=10, ge=1, le=60)
    session_minutes: int = Field(default=480, ge=5, le=10_080)
    page_rows: int = Field(default=50, ge=10, le=500)
    export_rows: int = Field(default=100_000, ge=100, le=10_000_000)

    _host = field_validator("host")(checked_host)

    @model_validator(mode="after")
    def _exposure(self) -> ConsoleConfig:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert and tls_key go together: set both for https://, or neither")
        if not is_loopback_host(self.host) and self.tls_cert is None and not self.behind_proxy:
            raise ValueError(
                f"host {self.host} takes the console off this machine in plain http://; set"
                " tls_cert and tls_key, or keep it on loopback, or put a TLS reverse proxy in"
                " front and say so with behind_proxy: true (docs/console.md)"
            )
        return self

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None

    @property
    def secure_cookie(self) -> bool:
        """The browser reaches the console over TLS: directly, or through the proxy."""
        return self.tls or self.behind_proxy
