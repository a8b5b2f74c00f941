"""Host names and IP literals as a URL may spell them, brought to one form before any check.

Browsers and the C resolver accept many spellings of one address: ``2130706433``,
``0177.0.0.1``, ``0x7f.1`` and ``127.1`` are all 127.0.0.1, and ``[fe80::1%25eth0]`` carries a
zone. A check that compared text would miss them, so every host goes through ``parse_host``:
percent-decoded, NFKC-folded (full-width digits become digits), lower-cased, a trailing dot
dropped, and then read as an IPv6 literal (brackets), an IPv4 literal in the WHATWG URL
standard's forms (one to four parts, each decimal, octal with a leading 0, or hex with 0x), or
else a name. A host whose last label is a number but that is not a valid IPv4 literal (a part
too large, ``1.2.3.4.5``) is refused rather than handed to a resolver that may read it its own
way.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address
from urllib.parse import unquote

from bridge.web.errors import ShieldRefused
from bridge.web.ranges import IPAddress

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.")


@dataclass(frozen=True, slots=True)
class Host:
    """A normalised host: ``name`` is what goes into the URL, Host header and TLS SNI;
    ``address`` is set when the host is an IP literal."""

    name: str
    address: IPAddress | None


def parse_host(raw: str) -> Host:
    """The normalised host, or ``ShieldRefused`` (rule ``host``) when it cannot be one."""
    text = unicodedata.normalize("NFKC", unquote(raw)).strip().lower()
    if text.startswith("[") or ":" in text:
        return Host(*_ipv6(text))
    if text.endswith("."):
        text = text[:-1]
    if not text:
        raise ShieldRefused("host", "the URL has no host")
    v4 = _ipv4(text)
    if v4 is not None:
        return Host(str(v4), v4)
    try:
        ascii_name = text.encode("idna").decode("ascii")
    except UnicodeError:
        raise ShieldRefused("host", f"{raw!r} is not a valid host name") from None
    if not set(ascii_name) <= _NAME_CHARS or ".." in ascii_name or len(ascii_name) > 253:
        raise ShieldRefused("host", f"{raw!r} is not a valid host name")
    return Host(ascii_name, None)


def _ipv6(text: str) -> tuple[str, IPv6Address]:
    inner = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    # A zone id is written %25eth0 in a URL (RFC 6874); unquote made it %eth0.
    try:
        address = IPv6Address(inner)
    except ValueError:
        raise ShieldRefused("host", f"{text!r} is not a valid IPv6 literal") from None
    return str(address), address


def _ipv4(text: str) -> IPv4Address | None:
    """The address when ``text`` is an IPv4 literal in any WHATWG form; ``None`` for a name;
    ``ShieldRefused`` for a number-ended host that is no valid address."""
    parts = text.split(".")
    if not _numeric(parts[-1]):
        return None
    if len(parts) > 4 or any(part == "" for part in parts):
        raise ShieldRefused("host", f"{text!r} ends in a number but is not an IPv4 address")
    numbers: list[int] = []
    for part in parts:
        value = _number(part)
        if value is None:
            raise ShieldRefused("host", f"{text!r} ends in a number but is not an IPv4 address")
        numbers.append(value)
    *head, last = numbers
    if any(value > 255 for value in head) or last >= 256 ** (5 - len(numbers)):
        raise ShieldRefused("host", f"{text!r} is out of range for an IPv4 address")
    value = last
    for index, byte in enumerate(head):
        value += byte << (8 * (3 - index))
    return IPv4Address(value)


def _numeric(part: str) -> bool:
    if part.startswith(("0x", "0X")):
        return all(c in "0123456789abcdef" for c in part[2:].lower())
    return part != "" and part.isascii() and part.isdigit()


def _number(part: str) -> int | None:
    try:
        if part.startswith("0x"):
            return int(part[2:] or "0", 16)
        if len(part) > 1 and part.startswith("0"):
            return int(part[1:], 8)
        return int(part, 10)
    except ValueError:
        return None
