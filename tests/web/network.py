"""The injected network of the web tests: a resolver whose answers a test scripts and a dialer
that carries connections to checked public test addresses on to a loopback site.

The shield sees only what the resolver answers (public addresses, the way a real name would);
the dialer is asked to connect to the address the shield admitted and may only route it to
loopback. Every lookup and every dial is recorded, so a test can prove there was exactly one
lookup per connection and that the socket went to the admitted address.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from ipaddress import ip_address
from pathlib import Path

import httpcore

from bridge.web.connector import direct_dialer
from bridge.web.ranges import IPAddress
from bridge.web.seam import ENV_VAR

PUBLIC_A = "93.184.216.34"
PUBLIC_B = "151.101.1.69"
PUBLIC_V6 = "2606:2800:220:1:248:1893:25c8:1946"


@dataclass
class ScriptedNetwork:
    """``answers[name]``: the successive answers of its lookups (the last one repeats)."""

    answers: dict[str, list[list[str]]] = field(default_factory=dict)
    routes: dict[tuple[str, int], int] = field(default_factory=dict)
    lookups: list[str] = field(default_factory=list)
    dials: list[tuple[str, int]] = field(default_factory=list)

    def name(self, host: str, *answers: Sequence[str]) -> None:
        self.answers[host] = [list(a) for a in answers]

    def route(self, address: str, site_port: int, port: int = 80) -> None:
        self.routes[(str(ip_address(address)), port)] = site_port

    async def resolve(self, host: str, port: int) -> list[str]:
        self.lookups.append(host)
        script = self.answers.get(host)
        if not script:
            raise httpcore.ConnectError(f"{host} does not resolve")
        count = sum(1 for seen in self.lookups if seen == host)
        return script[min(count, len(script)) - 1]

    async def dial(
        self, address: IPAddress, port: int, timeout: float | None
    ) -> httpcore.AsyncNetworkStream:
        self.dials.append((str(address), port))
        site_port = self.routes.get((str(address), port))
        if site_port is None:
            raise httpcore.ConnectError(f"no route to {address}:{port}")
        return await direct_dialer(ip_address("127.0.0.1"), site_port, timeout)


def routed(mapping: Mapping[str, int]) -> ScriptedNetwork:
    network = ScriptedNetwork()
    for address, port in mapping.items():
        network.route(address, port)
    return network


def wiki(site_port: int) -> ScriptedNetwork:
    """The usual network: ``wiki.example`` is ``PUBLIC_A``, routed to the loopback site."""
    network = ScriptedNetwork()
    network.name("wiki.example", [PUBLIC_A])
    network.route(PUBLIC_A, site_port)
    return network


def seam_env(folder: Path, site_port: int) -> dict[str, str]:
    """The environment that gives a bridge process the same network (``bridge.web.seam``):
    ``wiki.example`` is ``PUBLIC_A`` on port 80, routed to the loopback site."""
    path = folder / "network.json"
    routes = {f"{PUBLIC_A}:80": f"127.0.0.1:{site_port}"}
    path.write_text(json.dumps({"hosts": {"wiki.example": [PUBLIC_A]}, "routes": routes}))
    return {ENV_VAR: str(path)}
