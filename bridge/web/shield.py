"""The SSRF shield: which URLs a fetch may ask for and which addresses it may connect to.

Two checks, both here, both naming the rule that refused:

- ``check_url`` before a request (every redirect hop too): http or https only, no credentials
  in the URL, a host that normalises (``bridge.web.literals``), an allowed port (80 and 443
  unless ``web.allow_ports`` says more), and, for an IP literal, the range table at once.
- ``admit`` when the connector opens a connection: the host's addresses from one lookup, each
  checked against the range table (``bridge.web.ranges``); a name with any refused address is
  refused whole, so a name that answers with one public and one private address cannot win a
  race. The connector then connects to exactly the addresses this returned: there is no second
  lookup that could decide differently.

``web.allow_private_hosts`` is the only way round the table: a host name listed there may
resolve to any address, and an address inside a listed network may be connected to whatever
name led to it. Empty by default.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Network, IPv6Network, ip_address, ip_network
from urllib.parse import urlsplit, urlunsplit

from bridge.web.errors import ShieldRefused
from bridge.web.literals import Host, parse_host
from bridge.web.ranges import IPAddress, refusal

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""``(host, port) -> addresses as text``: one lookup. Injected so tests decide what names mean."""

DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class CheckedUrl:
    """A URL the shield let through, rebuilt with the normalised host."""

    url: str
    scheme: str
    host: Host
    port: int


@dataclass(frozen=True, slots=True)
class ShieldPolicy:
    """``allow_ports``: the ports a URL may name (80 and 443 by default).
    ``allow_private_hosts``: host names and IP networks exempt from the range table."""

    allow_ports: frozenset[int] = frozenset({80, 443})
    allow_private_hosts: tuple[str, ...] = ()
    _names: frozenset[str] = field(init=False, repr=False)
    _networks: tuple[IPv4Network | IPv6Network, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        names: set[str] = set()
        networks: list[IPv4Network | IPv6Network] = []
        for entry in self.allow_private_hosts:
            try:
                networks.append(ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                names.add(parse_host(entry).name)
        object.__setattr__(self, "_names", frozenset(names))
        object.__setattr__(self, "_networks", tuple(networks))

    def check_url(self, url: str) -> CheckedUrl:
        """The URL with its host normalised, or ``ShieldRefused`` naming the rule."""
        if len(url) > 4096:
            raise ShieldRefused("url", "the URL is over 4096 characters")
        if any(ord(c) < 0x21 or c == "\\" for c in url):
            raise ShieldRefused("url", "the URL holds spaces, control characters or backslashes")
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise ShieldRefused("url", f"not a URL: {exc}") from None
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS:
            raise ShieldRefused("scheme", f"only http and https URLs are fetched, not {scheme!r}")
        if parts.username is not None or parts.password is not None:
            raise ShieldRefused("credentials", "a URL with a user name or password is not fetched")
        netloc_host = parts.netloc.rpartition("@")[2]
        if netloc_host.startswith("["):
            raw_host = netloc_host[: netloc_host.index("]") + 1] if "]" in netloc_host else ""
        else:
            raw_host = netloc_host.partition(":")[0]
        host = parse_host(raw_host)
        port = DEFAULT_PORTS[scheme] if port is None else port
        if port not in self.allow_ports:
            allowed = ", ".join(str(p) for p in sorted(self.allow_ports))
            raise ShieldRefused("port", f"port {port} is not allowed (allowed: {allowed})")
        if host.address is not None:
            self.check_address(host.name, host.address)
        shown = f"[{host.name}]" if ":" in host.name else host.name
        if port != DEFAULT_PORTS[scheme]:
            shown = f"{shown}:{port}"
        path = parts.path or "/"
        return CheckedUrl(urlunsplit((scheme, shown, path, parts.query, "")), scheme, host, port)

    def check_address(self, name: str, address: IPAddress) -> None:
        """``ShieldRefused`` when ``name`` may not be connected to at ``address``."""
        if name in self._names or any(address in net for net in self._networks):
            return
        found = refusal(address)
        if found is not None:
            raise ShieldRefused(found.rule, found.describe(name))

    async def admit(self, host: str, port: int, resolver: Resolver) -> list[IPAddress]:
        """The addresses the connector may connect to for ``host``: from one lookup (none
        for a literal), all checked. Refused whole when any address is refused."""
        if port not in self.allow_ports:
            raise ShieldRefused("port", f"port {port} is not allowed")
        parsed = parse_host(host)
        if parsed.address is not None:
            self.check_address(parsed.name, parsed.address)
            return [parsed.address]
        if parsed.name == "localhost" or parsed.name.endswith(".localhost"):
            if parsed.name not in self._names:
                raise ShieldRefused("localhost", f"{parsed.name} names this machine (RFC 6761)")
        answers = await resolver(parsed.name, port)
        addresses: list[IPAddress] = []
        for text in answers:
            try:
                address = ip_address(text)
            except ValueError:
                raise ShieldRefused("host", f"{parsed.name} resolved to {text!r}") from None
            self.check_address(parsed.name, address)
            if address not in addresses:
                addresses.append(address)
        if not addresses:
            raise ShieldRefused("host", f"{parsed.name} resolved to no address")
        return addresses
