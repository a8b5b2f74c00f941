"""What a fetched body is and how its bytes become text.

Only text is read: HTML (and XHTML), plain text, Markdown and JSON. A PDF, an image, audio,
video, an archive or anything else is refused with a sentence saying what it was, so the model
can tell the player instead of guessing. The charset is the one the ``Content-Type`` header
declares; without one, a byte-order mark, then (HTML only) a ``<meta charset>`` in the first
kilobyte, the place the HTML standard's prescan looks, then a statistical guess
(charset-normalizer), then UTF-8. Undecodable bytes become U+FFFD, never an exception.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Literal

from charset_normalizer import from_bytes

from bridge.web.errors import FetchRefused

Kind = Literal["html", "plain", "markdown", "json"]

TEXT_TYPES: dict[str, Kind] = {
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/plain": "plain",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "application/json": "json",
}
_REFUSED_FAMILIES = {
    "image": "an image",
    "audio": "audio",
    "video": "a video",
    "font": "a font",
    "model": "a 3D model",
}
_REFUSED_TYPES = {
    "application/pdf": "a PDF document",
    "application/zip": "a zip archive",
    "application/octet-stream": "binary data",
    "application/java-archive": "a Java archive",
}
# The HTML standard's prescan reads <meta charset=...> or the http-equiv form in the first
# 1024 bytes; this is that lookup over bytes, not a reading of the page's content.
_META_CHARSET = re.compile(
    rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]{1,40})""", re.IGNORECASE
)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


@dataclass(frozen=True, slots=True)
class MediaType:
    essence: str
    charset: str | None

    @classmethod
    def parse(cls, header: str | None) -> MediaType:
        if not header:
            return cls("", None)
        essence, _, rest = header.partition(";")
        charset = None
        for parameter in rest.split(";"):
            name, _, value = parameter.strip().partition("=")
            if name.strip().lower() == "charset" and value.strip():
                charset = value.strip().strip("\"'").lower()
        return cls(essence.strip().lower(), charset)


def text_kind(media: MediaType) -> Kind:
    """The kind of text, or ``FetchRefused`` (``not_text``) saying what the body is."""
    kind = TEXT_TYPES.get(media.essence)
    if kind is None and media.essence.endswith("+json"):
        kind = "json"
    if kind is not None:
        return kind
    family = media.essence.partition("/")[0]
    what = _REFUSED_TYPES.get(media.essence) or _REFUSED_FAMILIES.get(family)
    if not media.essence:
        raise FetchRefused("not_text", "the server did not say what the content is; not read")
    if what is None:
        what = f"content of type {media.essence}"
    raise FetchRefused(
        "not_text",
        f"the URL is {what}, which web_fetch does not read (only HTML, plain text, Markdown "
        "and JSON)",
    )


def decode(body: bytes, media: MediaType, kind: Kind) -> tuple[str, str]:
    """``(text, charset used)``."""
    for charset in _candidates(body, media, kind):
        try:
            codecs.lookup(charset)
        except LookupError:
            continue
        return body.decode(charset, errors="replace"), charset
    return body.decode("utf-8", errors="replace"), "utf-8"


def _candidates(body: bytes, media: MediaType, kind: Kind) -> list[str]:
    found: list[str] = []
    if media.charset:
        found.append(media.charset)
    for bom, name in _BOMS:
        if body.startswith(bom):
            found.append(name)
    if kind == "html":
        match = _META_CHARSET.search(body[:1024])
        if match:
            found.append(match.group(1).decode("ascii").lower())
    if kind == "json":
        found.append("utf-8")  # RFC 8259: JSON exchanged between systems is UTF-8
    if not found:
        guess = from_bytes(body[:65_536]).best()
        if guess is not None:
            found.append(guess.encoding)
    return found
