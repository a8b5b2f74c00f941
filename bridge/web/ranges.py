"""The shield's own table of addresses a fetch may never connect to.

Python's ``ipaddress`` flags are not the table: ``is_global`` and ``is_private`` follow the
IANA registries only loosely across Python versions, and several IPv6 forms that embed a
private IPv4 address (6to4, NAT64, IPv4-mapped) count as global to them. So the rules are
written out here, each with the name a refusal carries, from the IANA IPv4 and IPv6
Special-Purpose Address Registries, the multicast blocks, and the IPv6 address space registry
(everything outside 2000::/3 is reserved or special). IPv6 forms that carry an IPv4 address are
decided by that address.

``refusal(address)`` is the whole check: ``None`` for an address a fetch may connect to,
otherwise the ``Refusal`` naming the rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

IPAddress = IPv4Address | IPv6Address


@dataclass(frozen=True, slots=True)
class Rule:
    """One refused range: ``name`` is the stable rule id (audit, tests), ``what`` says why."""

    name: str
    network: IPv4Network | IPv6Network
    what: str


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an address is refused: the rule, and the address it was decided on (an embedded
    IPv4 address for the IPv6 forms that carry one)."""

    rule: str
    address: str
    reason: str

    def describe(self, name: str) -> str:
        """One sentence about ``name`` (the host asked for), naming the address only when it
        is not the name itself; the rule is named once, by the refusal that carries this."""
        if name == self.address:
            return f"{name} is {self.reason}"
        return f"{name} is at {self.address}, {self.reason}"


def _v4(name: str, cidr: str, what: str) -> Rule:
    return Rule(name, IPv4Network(cidr), what)


def _v6(name: str, cidr: str, what: str) -> Rule:
    return Rule(name, IPv6Network(cidr), what)


# Most specific first is not needed (first match wins and no two overlap in v4).
IPV4_RULES: tuple[Rule, ...] = (
    _v4("this-network", "0.0.0.0/8", "'this network' (RFC 791), including unspecified 0.0.0.0"),
    _v4("private", "10.0.0.0/8", "private (RFC 1918)"),
    _v4("shared-cgnat", "100.64.0.0/10", "shared carrier-grade NAT space (RFC 6598)"),
    _v4("loopback", "127.0.0.0/8", "loopback (RFC 1122)"),
    _v4("link-local", "169.254.0.0/16", "link-local, where cloud metadata lives (RFC 3927)"),
    _v4("private", "172.16.0.0/12", "private (RFC 1918)"),
    _v4("ietf-protocol", "192.0.0.0/24", "IETF protocol assignments (RFC 6890)"),
    _v4("documentation", "192.0.2.0/24", "documentation TEST-NET-1 (RFC 5737)"),
    _v4("as112", "192.31.196.0/24", "AS112 anycast (RFC 7535)"),
    _v4("amt", "192.52.193.0/24", "AMT relay anycast (RFC 7450)"),
    _v4("6to4-relay", "192.88.99.0/24", "the deprecated 6to4 relay anycast (RFC 7526)"),
    _v4("private", "192.168.0.0/16", "private (RFC 1918)"),
    _v4("as112", "192.175.48.0/24", "AS112 direct delegation (RFC 7534)"),
    _v4("benchmarking", "198.18.0.0/15", "benchmarking (RFC 2544)"),
    _v4("documentation", "198.51.100.0/24", "documentation TEST-NET-2 (RFC 5737)"),
    _v4("documentation", "203.0.113.0/24", "documentation TEST-NET-3 (RFC 5737)"),
    _v4("multicast", "224.0.0.0/4", "multicast (RFC 5771)"),
    _v4("broadcast", "255.255.255.255/32", "limited broadcast (RFC 919)"),
    _v4("reserved", "240.0.0.0/4", "reserved for future use (RFC 1112)"),
)

# IPv6 forms carrying an IPv4 address; decided in ``_embedded`` before the table below.
MAPPED = IPv6Network("::ffff:0:0/96")
TRANSLATED = IPv6Network("::ffff:0:0:0/96")
COMPATIBLE = IPv6Network("::/96")
NAT64 = IPv6Network("64:ff9b::/96")
SIX_TO_FOUR = IPv6Network("2002::/16")
TEREDO = IPv6Network("2001::/32")

IPV6_RULES: tuple[Rule, ...] = (
    _v6("unspecified", "::/128", "the unspecified address (RFC 4291)"),
    _v6("loopback", "::1/128", "loopback (RFC 4291)"),
    _v6("nat64-local", "64:ff9b:1::/48", "local-use NAT64 translation (RFC 8215)"),
    _v6("discard", "100::/64", "discard-only (RFC 6666)"),
    _v6("dummy-prefix", "100:0:0:1::/64", "the dummy IPv6 prefix (RFC 9780)"),
    _v6("benchmarking", "2001:2::/48", "benchmarking (RFC 5180)"),
    _v6("orchid", "2001:10::/28", "ORCHID (RFC 4843)"),
    _v6("orchid", "2001:20::/28", "ORCHIDv2 (RFC 7343)"),
    _v6("ietf-protocol", "2001::/23", "IETF protocol assignments (RFC 2928)"),
    _v6("documentation", "2001:db8::/32", "documentation (RFC 3849)"),
    _v6("as112", "2620:4f:8000::/48", "AS112 direct delegation (RFC 7534)"),
    _v6("documentation", "3fff::/20", "documentation (RFC 9637)"),
    _v6("segment-routing", "5f00::/16", "SRv6 segment identifiers (RFC 9602)"),
    _v6("unique-local", "fc00::/7", "unique local, the IPv6 private range (RFC 4193)"),
    _v6("link-local", "fe80::/10", "link-local (RFC 4291)"),
    _v6("site-local", "fec0::/10", "the deprecated site-local range (RFC 3879)"),
    _v6("multicast", "ff00::/8", "multicast (RFC 4291)"),
)
GLOBAL_UNICAST = IPv6Network("2000::/3")


def refusal(address: IPAddress) -> Refusal | None:
    """``None`` when a fetch may connect to ``address``, else the rule that refuses it."""
    if isinstance(address, IPv4Address):
        return _v4_refusal(address)
    if address.scope_id:  # a zone names an interface: only link-scoped addresses have one
        bare = IPv6Address(int(address))
        found = refusal(bare)
        if found is not None:
            return Refusal(found.rule, str(address), found.reason)
        return Refusal("zone-id", str(address), "an address with a zone id (interface-scoped)")
    decided, embedded = _embedded(address)
    if decided:
        return embedded
    for rule in IPV6_RULES:
        if address in rule.network:
            return Refusal(rule.name, str(address), rule.what)
    if address not in GLOBAL_UNICAST:
        return Refusal("reserved", str(address), "outside 2000::/3, reserved by the IETF")
    return None


def _v4_refusal(address: IPv4Address) -> Refusal | None:
    for rule in IPV4_RULES:
        if address in rule.network:
            return Refusal(rule.name, str(address), rule.what)
    return None


def _embedded(address: IPv6Address) -> tuple[bool, Refusal | None]:
    """The IPv6 forms that carry an IPv4 address. Mapped, translated and compatible forms
    are never what a web server publishes and reach the IPv4 host through the local stack:
    refused whatever they carry. NAT64, 6to4 and Teredo are refused when what they carry is;
    Teredo always (a tunnel endpoint is no web server), naming the private address if any.
    The first value says whether the address was one of these forms (then the second is the
    answer: a NAT64 form of a public address lies outside 2000::/3 and is still allowed)."""
    value = int(address)
    for network, name, what in (
        (MAPPED, "ipv4-mapped", "an IPv4-mapped IPv6 address"),
        (TRANSLATED, "ipv4-translated", "an IPv4-translated IPv6 address (RFC 2765)"),
    ):
        if address in network:
            inner = IPv4Address(value & 0xFFFFFFFF)
            return True, Refusal(name, str(address), f"{what} of {inner}")
    if address in COMPATIBLE and value > 1:  # :: and ::1 are in the table
        inner = IPv4Address(value & 0xFFFFFFFF)
        return True, Refusal("ipv4-compatible", str(address), f"an IPv4-compatible form of {inner}")
    carried: tuple[str, IPv4Address] | None = None
    if address in NAT64:
        carried = ("nat64", IPv4Address(value & 0xFFFFFFFF))
    elif address in SIX_TO_FOUR:
        carried = ("6to4", IPv4Address((value >> 80) & 0xFFFFFFFF))
    elif address in TEREDO:
        server = IPv4Address((value >> 64) & 0xFFFFFFFF)
        client = IPv4Address(~value & 0xFFFFFFFF)
        for inner in (client, server):
            inside = _v4_refusal(inner)
            if inside is not None:
                what = f"Teredo carrying {inside.reason} {inner}"
                return True, Refusal(f"teredo-{inside.rule}", str(address), what)
        return True, Refusal("teredo", str(address), "a Teredo tunnel address (RFC 4380)")
    if carried is None:
        return False, None
    name, inner = carried
    inside = _v4_refusal(inner)
    if inside is None:
        return True, None
    what = f"{name} carrying {inside.reason} {inner}"
    return True, Refusal(f"{name}-{inside.rule}", str(address), what)
