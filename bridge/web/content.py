"""What a fetched body is and how its bytes become text.

Only text is read: HTML (and XHTML), plain text, Markdown and JSON. A PDF, an image, audio,
video, an archive or anything else is refused with a sentence saying what it was, so the model
can tell the player instead of guessing. The charset is the one the ``Content-Type`` header
declares; without one, a byte-order mark, then (HTML only) a ``<meta charset>`` in the first
kilobyte, the place the HTML standard's prescan looks, then a statistical guess
(charset-normalizer), then UTF-8. Undecodable bytes become U+FFFD, never an exception.

A charset is a name the page chooses, and Python's codec registry holds more than text
encodings (``hex``, ``rot13``, ``base64``, ``zlib``, ``idna``: some turn bytes into bytes,
some decompress, some raise): so the name is looked up in this module's own list of text
encodings (the WHATWG Encoding Standard's, as far as Python has them), never in the registry.
A name not on the list is read as UTF-8 and the result says so (``Decoded.refused``).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Literal

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


# Labels (lower case, "_" read as "-") of the text encodings a page may choose, to the Python
# codec that reads each. UTF-7 and UTF-32 are left out as the Encoding Standard leaves them.
_SINGLE_BYTE = {
    **{f"iso-8859-{n}": f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)},
    **{f"iso8859-{n}": f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)},
    **{f"windows-{n}": f"cp{n}" for n in range(1250, 1259)},
    **{f"cp{n}": f"cp{n}" for n in range(1250, 1259)},
    "iso-8859-1": "cp1252",  # the Encoding Standard reads Latin-1 labels as windows-1252
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "l1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "koi8-r": "koi8-r",
    "koi8-u": "koi8-u",
    "ibm866": "cp866",
    "cp866": "cp866",
    "windows-874": "cp874",
    "tis-620": "cp874",
    "macintosh": "mac-roman",
    "mac-roman": "mac-roman",
    "x-mac-cyrillic": "mac-cyrillic",
}
TEXT_ENCODINGS: dict[str, str] = {
    **_SINGLE_BYTE,
    "utf-8": "utf-8",
    "utf8": "utf-8",
    "unicode-1-1-utf-8": "utf-8",
    "utf-8-sig": "utf-8-sig",
    "utf-16": "utf-16",
    "utf-16le": "utf-16-le",
    "utf-16-le": "utf-16-le",
    "utf-16be": "utf-16-be",
    "utf-16-be": "utf-16-be",
    "shift-jis": "shift_jis",
    "sjis": "shift_jis",
    "windows-31j": "cp932",
    "cp932": "cp932",
    "euc-jp": "euc_jp",
    "iso-2022-jp": "iso2022_jp",
    "gb2312": "gbk",
    "gbk": "gbk",
    "gb18030": "gb18030",
    "big5": "big5hkscs",
    "big5-hkscs": "big5hkscs",
    "euc-kr": "cp949",
    "cp949": "cp949",
}
_LABEL = re.compile(r"[a-z0-9._:\-]{1,40}")


@dataclass(frozen=True, slots=True)
class Decoded:
    """A body as text. ``charset``: the label that chose the codec; ``refused``: the charset
    the page named that is not a text encoding on the list (then ``charset`` is UTF-8)."""

    text: str
    charset: str
    refused: str | None = None


def text_encoding(label: str) -> str | None:
    """The Python codec for a charset label the page gave, or None when it is not on the list."""
    return TEXT_ENCODINGS.get(label.strip().lower().replace("_", "-"))


def shown_label(label: str) -> str:
    """A page's charset label as it may be quoted back: short, and only label characters."""
    text = label.strip().lower()[:40]
    return text if _LABEL.fullmatch(text) else "an unreadable label"


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


def decode(body: bytes, media: MediaType, kind: Kind) -> Decoded:
    """The body as text, read with the first charset found (header, BOM, meta, guess): one on
    the list of text encodings, or UTF-8 when the first one named is not on it."""
    for label in _candidates(body, media, kind):
        codec = text_encoding(label)
        if codec is None:
            return Decoded(body.decode("utf-8", errors="replace"), "utf-8", shown_label(label))
        return Decoded(body.decode(codec, errors="replace"), label.strip().lower())
    return Decoded(body.decode("utf-8", errors="replace"), "utf-8")


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
        # Imported here: 2.5 MB of tables a bridge with the web tools off never needs.
        from charset_normalizer import from_bytes

        guess = from_bytes(body[:65_536]).best()
        # A guess is the bridge's, not the page's: one off the list is no charset to report.
        if guess is not None and text_encoding(guess.encoding) is not None:
            found.append(guess.encoding)
    return found
