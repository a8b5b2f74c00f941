"""The metrics endpoint: Prometheus text format over HTTP on a loopback address only.

Served by a threaded WSGI server around ``prometheus_client``'s exposition, so a slow scraper
never holds the event loop. Only ``/metrics`` answers (to ``GET``); every other path is a
404, so the endpoint does not look like a page of something else to whoever probes the port.
Loopback only: the numbers say who is spending what, which is the owner's business, and there
is no authentication; put a reverse proxy in front to scrape from elsewhere.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable, Iterable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import make_wsgi_app
from prometheus_client.exposition import ThreadingWSGIServer

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


METRICS_PATH = "/metrics"
_NOT_FOUND = b"not found: the metrics are at /metrics\n"

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def only_metrics_path(app: WsgiApp) -> WsgiApp:
    """``app`` at ``/metrics``; a 404 on any other path (prometheus_client serves every path)."""

    def routed(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO", "") != METRICS_PATH:
            start_response(
                "404 Not Found",
                [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", "39")],
            )
            return [_NOT_FOUND]
        return app(environ, start_response)

    return routed


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        """A scrape every few seconds is not worth a line on stderr."""


class _Server4(ThreadingWSGIServer):
    address_family = socket.AF_INET


class _Server6(ThreadingWSGIServer):
    address_family = socket.AF_INET6


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
        app = only_metrics_path(make_wsgi_app(metrics.registry))
        bind = host.strip("[]")
        server_class = _Server6 if ":" in bind else _Server4
        try:
            server = make_server(bind, port, app, server_class, handler_class=_QuietHandler)
        except OSError as exc:
            raise MetricsError(f"cannot serve metrics on {host}:{port}: {exc}") from exc
        thread = threading.Thread(target=server.serve_forever, name="metrics", daemon=True)
        thread.start()
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
