"""The metrics endpoint: Prometheus text format over HTTP on a loopback address only.

Served by ``prometheus_client``'s own threaded HTTP server, so a slow scraper never holds the
event loop. Loopback only: the numbers say who is spending what, which is the owner's business,
and there is no authentication; put a reverse proxy in front to scrape from elsewhere.
"""

from __future__ import annotations

import ipaddress
import threading
from typing import Any

from prometheus_client import start_http_server

from bridge.errors import MineclawError
from bridge.metrics.bridge_metrics import BridgeMetrics


class MetricsError(MineclawError):
    """The endpoint could not start (a port in use, a host that is not loopback)."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class MetricsEndpoint:
    """``await``-free: `start` binds and serves from a thread; `close` stops it."""

    def __init__(self, server: Any, thread: threading.Thread, host: str, port: int) -> None:
        self._server = server
        self._thread = thread
        self.host = host
        self.port = port

    @classmethod
    def start(cls, metrics: BridgeMetrics, *, host: str, port: int) -> MetricsEndpoint:
        """Serve ``metrics`` on ``http://host:port/metrics``; port 0 picks a free one."""
        if not is_loopback(host):
            raise MetricsError(f"metrics.host {host!r} is not a loopback address")
        try:
            server, thread = start_http_server(port, addr=host, registry=metrics.registry)
        except OSError as exc:
            raise MetricsError(f"cannot serve metrics on {host}:{port}: {exc}") from exc
        bound = int(server.server_address[1])
        return cls(server, thread, host, bound)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
