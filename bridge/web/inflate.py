"""A compressed body inflated in steps, to a cap and to a ratio, in the extraction worker.

``web_fetch`` asks for ``identity``, but a server may compress anyway. A stranger's compressed
body is work the bridge must not do on its event loop (zlib's inflate holds the loop for as long
as it runs, and a small body can ask for a great deal), so it is inflated in the extraction
worker, with the page's parsing, and killed with it at the fetch's deadline. Here it is bounded
twice: never more than ``cap`` bytes out (``web.max_bytes``), and, past the first
``MIN_ROOM``, never more than ``MAX_RATIO`` bytes out per byte in (a compression bomb is cut
there, and said). The inflater is fed in slices of ``STEP`` bytes and asked for at most the
room left each time, so memory stays that of the output.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

ENCODINGS = {"gzip": 31, "x-gzip": 31, "deflate": 15}
"""The ``Content-Encoding`` names inflated, with zlib's window bits (31: a gzip wrapper)."""
MAX_RATIO = 100
"""The most bytes out per compressed byte in: HTML and text compress 3 to 15 times; a body
that claims far more is a bomb, read only as far as this ratio allows."""
MIN_ROOM = 1_000_000
"""A small body may always inflate this far (cheap): a short page that repeats itself is whole."""
STEP = 65_536


class Uninflatable(Exception):
    """The body is not the compressed stream its header names."""


@dataclass(frozen=True, slots=True)
class Inflated:
    body: bytes
    cut: bool
    note: str | None = None


def inflate(raw: bytes, encoding: str, cap: int) -> Inflated:
    """``raw`` inflated to at most ``cap`` bytes and ``MAX_RATIO`` times its size (or
    ``MIN_ROOM``); ``Uninflatable`` when it is not the stream ``encoding`` names."""
    wbits = ENCODINGS[encoding]
    room = min(cap, max(len(raw) * MAX_RATIO, MIN_ROOM))
    inflater = zlib.decompressobj(wbits)
    out = bytearray()
    try:
        for start in range(0, len(raw), STEP):
            pending = raw[start : start + STEP]
            while pending and len(out) < room:
                out += inflater.decompress(pending, room - len(out))
                pending = inflater.unconsumed_tail
            if len(out) >= room:  # full: cut only if one more byte would come out
                if inflater.decompress(pending + raw[start + STEP :], 1):
                    return _cut(bytes(out), room < cap)
                break
    except zlib.error as exc:
        raise Uninflatable(f"the {encoding} body could not be inflated ({exc})") from None
    return Inflated(bytes(out), False)


def _cut(body: bytes, by_ratio: bool) -> Inflated:
    if not by_ratio:
        return Inflated(body, True)
    note = (
        f"the compressed body inflates to more than {MAX_RATIO} times its size (a compression "
        f"bomb?): only its first {len(body)} bytes were read"
    )
    return Inflated(body, True, note)
