"""``config.yml`` ``metrics``: the Prometheus endpoint, off by default and loopback only."""

from __future__ import annotations

import ipaddress

from pydantic import Field, field_validator

from bridge.control.base import StrictModel

DEFAULT_METRICS_PORT = 9464


class MetricsConfig(StrictModel):
    """``enabled``: serve ``http://host:port/metrics``; ``host`` must be a loopback address
    (the numbers say who spends what, and the endpoint has no authentication)."""

    enabled: bool = False
    host: str = Field(default="127.0.0.1", min_length=1, max_length=64)
    port: int = Field(default=DEFAULT_METRICS_PORT, ge=1, le=65_535)

    @field_validator("host")
    @classmethod
    def _loopback(cls, value: str) -> str:
        if value == "localhost":
            return value
        try:
            loopback = ipaddress.ip_address(value.strip("[]")).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise ValueError(
                "must be a loopback address (127.0.0.1, ::1 or localhost); put a reverse proxy"
                " in front to scrape from another machine"
            )
        return value
