"""The test-only network of a bridge process: names and routes a test decides.

End-to-end tests run the real bridge process and must never leave loopback, yet the shield must
see public addresses (it refuses loopback, rightly). ``MINECLAW_TEST_WEB_NETWORK`` names a JSON
file::

    {"hosts": {"wiki.example": ["93.184.216.34"]},
     "routes": {"93.184.216.34:80": "127.0.0.1:41234"}}

``hosts`` is the resolver: a name not listed does not resolve. ``routes`` is the dialer: a
connection to a checked address and port is carried to the loopback address given; an address
not listed cannot be connected to. The shield is untouched: it checks the addresses ``hosts``
gives exactly as it checks real ones, and the route is taken only after it said yes. Never set
in production; the bridge logs a warning when it is.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from ipaddress import ip_address
from pathlib import Path

import httpcore

from bridge.errors import ConfigError
from bridge.web.connector import direct_dialer
from bridge.web.ranges import IPAddress

ENV_VAR = "MINECLAW_TEST_WEB_NETWORK"
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TestNetwork:
    hosts: Mapping[str, tuple[str, ...]]
    routes: Mapping[str, str]

    __test__ = False  # not a pytest class

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> TestNetwork | None:
        path = environ.get(ENV_VAR)
        if not path:
            return None
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            hosts = {str(k): tuple(str(a) for a in v) for k, v in data.get("hosts", {}).items()}
            routes = {str(k): str(v) for k, v in data.get("routes", {}).items()}
        except (OSError, ValueError, AttributeError, TypeError) as exc:
            raise ConfigError(
                f"{ENV_VAR}={path}: not a test network file "
                '({"hosts": {name: [addresses]}, "routes": {"address:port": "127.0.0.1:port"}}): '
                f"{exc}"
            ) from None
        log.warning("%s is set: web tools use a test network, not the real one", ENV_VAR)
        return cls(hosts, routes)

    async def resolve(self, host: str, port: int) -> list[str]:
        answers = self.hosts.get(host)
        if answers is None:
            raise httpcore.ConnectError(f"{host} does not resolve on the test network")
        return list(answers)

    async def dial(
        self, address: IPAddress, port: int, timeout: float | None
    ) -> httpcore.AsyncNetworkStream:
        target = self.routes.get(f"{address}:{port}")
        if target is None:
            raise httpcore.ConnectError(f"no route to {address}:{port} on the test network")
        host, _, target_port = target.rpartition(":")
        if host not in ("127.0.0.1", "::1"):
            raise httpcore.ConnectError("the test network routes to loopback only")
        return await direct_dialer(ip_address(host), int(target_port), timeout)
