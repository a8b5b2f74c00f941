"""``config.yml``'s ``web`` section: the web tools (``web_fetch``, ``web_search``) and the
shield's exceptions. Off by default; the tools are offered only while ``enabled`` is true.

The search backend's key is an environment reference (``api_key: ${TAVILY_API_KEY}``, set in
``.env``): a literal key is refused, as ``config.yml`` is often shared and ``.env`` is not.
"""

from __future__ import annotations

import re
from ipaddress import ip_network
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from bridge.control.base import StrictModel
from bridge.control.secrets import Secret, referenced_secret

_HOST_NAME = re.compile(
    r"(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*"
)
_URL = re.compile(r"https?://[^\s/?#]+(/[^\s]*)?")
_PROXY = re.compile(r"http://[A-Za-z0-9.\-\[\]:]+(:[0-9]{1,5})?/?")


def http_url(value: str | None) -> str | None:
    """A field's check that ``value`` (when set) is an http:// or https:// URL."""
    if value is not None and not _URL.fullmatch(value):
        raise ValueError("must be an http:// or https:// URL")
    return value


class WebSearchConfig(StrictModel):
    """Which search backend ``web_search`` asks (``url``: SearXNG's address, or another endpoint
    of Tavily or Brave)."""

    backend: Literal["none", "searxng", "tavily", "brave"] = "none"
    url: str | None = Field(default=None, max_length=2048)
    api_key: Secret = Field(default=Secret(""), validate_default=True)
    max_results: int = Field(default=5, ge=1, le=20)
    timeout_ms: int = Field(default=10_000, ge=500, le=60_000)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return http_url(value)

    @field_validator("api_key", mode="before")
    @classmethod
    def _key(cls, value: Any, info: ValidationInfo) -> Any:
        return referenced_secret(value, info, example="TAVILY_API_KEY", what="key", required=True)

    @model_validator(mode="after")
    def _needs_key(self) -> WebSearchConfig:
        if self.backend == "searxng" and self.url is None:
            raise ValueError("backend searxng needs url: the address of your SearXNG instance")
        if self.backend in ("tavily", "brave") and not self.api_key.get_secret_value():
            raise ValueError(f"backend {self.backend} needs api_key: ${{NAME}} (set in .env)")
        return self

    @property
    def key(self) -> str | None:
        return self.api_key.get_secret_value() or None


class WebConfig(StrictModel):
    """The web tools and their limits."""

    enabled: bool = False
    allow_ports: list[int] = Field(default_factory=lambda: [80, 443], min_length=1, max_length=32)
    allow_private_hosts: list[str] = Field(default_factory=list, max_length=64)
    connect_timeout_ms: int = Field(default=5_000, ge=100, le=60_000)
    total_timeout_ms: int = Field(default=15_000, ge=1_000, le=120_000)
    max_bytes: int = Field(default=2_000_000, ge=16_384, le=20_000_000)
    max_redirects: int = Field(default=5, ge=0, le=10)
    max_chars: int = Field(default=20_000, ge=256, le=200_000)
    proxy: str | None = Field(default=None, max_length=2048)
    search: WebSearchConfig = Field(default_factory=WebSearchConfig)

    @field_validator("allow_ports")
    @classmethod
    def _ports(cls, value: list[int]) -> list[int]:
        for port in value:
            if not 1 <= port <= 65_535:
                raise ValueError(f"{port} is not a TCP port (1-65535)")
        return value

    @field_validator("proxy")
    @classmethod
    def _proxy(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not _PROXY.fullmatch(value):
            raise ValueError(
                "must be an http:// proxy address such as http://proxy.lan:3128, without a "
                "user name or password"
            )
        return value

    @field_validator("allow_private_hosts")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        for entry in value:
            try:
                ip_network(entry.strip("[]"), strict=False)
                continue
            except ValueError:
                pass
            if not _HOST_NAME.fullmatch(entry.lower().rstrip(".")):
                raise ValueError(
                    f"{entry!r} is neither a host name nor an IP address or network (CIDR)"
                )
        return value
