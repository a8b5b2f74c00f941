"""``web_fetch``'s engine: one URL in, readable text out, every hop through the shield.

Redirects are followed here, not by httpx, so each hop's URL is checked by the shield before
its request (a redirect to ``http://169.254.169.254/`` is refused like a first URL), and each
connection is checked again at connect time by the connector. The body is read as a stream and
reading stops at ``max_bytes``: a huge or endless body costs at most that. Connect and total
timeouts bound the time: the total one is a deadline for everything, the body's reading into
text included, which happens in an extraction worker process killed at that deadline
(``bridge.web.extraction_pool``).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import httpx

from bridge.redaction import RedactionRule
from bridge.web.connector import (
    Dialer,
    ShieldedBackend,
    ShieldedTransport,
    ShieldObserver,
    direct_dialer,
    shared_context,
    system_resolver,
)
from bridge.web.content import MediaType, text_kind
from bridge.web.errors import FetchFailed, FetchRefused, ShieldRefused
from bridge.web.extraction_pool import (
    ExtractionCut,
    ExtractionFailed,
    ExtractionPool,
    ExtractionRefused,
    Extractor,
    shared_pool,
)
from bridge.web.inflate import ENCODINGS
from bridge.web.shield import Resolver, ShieldPolicy

REDIRECTS = frozenset({301, 302, 303, 307, 308})
ACCEPT = "text/html,application/xhtml+xml,text/markdown,text/plain,application/json;q=0.9"


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchSettings:
    """The limits of ``web_fetch``; defaults are those of ``config.yml`` ``web``."""

    policy: ShieldPolicy = field(default_factory=ShieldPolicy)
    connect_timeout_s: float = 5.0
    total_timeout_s: float = 15.0
    max_bytes: int = 2_000_000
    max_redirects: int = 5
    max_chars: int = 20_000
    user_agent: str = "Mineclaw-bridge web_fetch"
    proxy: str | None = None
    """An http:// proxy the owner configured (``web.proxy``); None: connect directly."""


@dataclass(frozen=True, slots=True)
class Page:
    """What a fetch returns. ``hops``: every URL asked for, the first one included."""

    url: str
    final_url: str
    status: int
    content_type: str
    charset: str
    title: str | None
    text: str
    truncated: bool
    bytes_read: int
    hops: tuple[str, ...]
    extractor: Extractor = "none"
    """``trafilatura``, ``plain`` (text from the HTML tree, when trafilatura was cut off) or
    ``none`` (not HTML)."""
    note: str | None = None
    """Why the fallback extractor, or that the page's charset was not read as declared."""


@dataclass(slots=True)
class FetchTrace:
    """What a fetch got as far as (for the audit record when it fails part way)."""

    final_url: str | None = None
    bytes_read: int = 0


class WebFetcher:
    """Fetches pages under ``settings``; ``resolver`` and ``dialer`` are the network (tests
    inject both; production uses the system resolver and connects to checked addresses)."""

    def __init__(
        self,
        settings: FetchSettings,
        *,
        resolver: Resolver = system_resolver,
        dialer: Dialer = direct_dialer,
        observer: ShieldObserver | None = None,
        ssl_context: ssl.SSLContext | None = None,
        extraction: ExtractionPool | None = None,
    ) -> None:
        """``extraction``: the worker pool bodies are read in (the process's shared one)."""
        self.settings = settings
        self._extraction = extraction
        self._resolver = resolver
        self._backend = ShieldedBackend(
            settings.policy,
            resolver=resolver,
            dialer=dialer,
            observer=observer,
            proxy=_origin(settings.proxy),
        )
        self._ssl_context = ssl_context

    async def fetch(
        self,
        url: str,
        *,
        max_chars: int | None = None,
        trace: FetchTrace | None = None,
        redaction: Sequence[RedactionRule] = (),
    ) -> Page:
        """The page at ``url``. Raises ``ShieldRefused``, ``FetchRefused`` or ``FetchFailed``.
        ``redaction``: rules the extraction worker applies to the page's text and title (whole,
        before the cut to ``max_chars``), so what comes back to this loop is already redacted
        by them."""
        settings = self.settings
        trace = trace if trace is not None else FetchTrace()
        limit = settings.max_chars if max_chars is None else min(max_chars, settings.max_chars)
        deadline = asyncio.get_running_loop().time() + settings.total_timeout_s
        try:
            async with asyncio.timeout_at(deadline):
                return await self._fetch(url, limit, trace, deadline, redaction)
        except TimeoutError:
            raise FetchFailed(
                "timeout", f"the fetch took longer than {settings.total_timeout_s:g} s"
            ) from None

    async def _fetch(
        self,
        url: str,
        limit: int,
        trace: FetchTrace,
        deadline: float,
        redaction: Sequence[RedactionRule],
    ) -> Page:
        settings = self.settings
        context = self._ssl_context or await shared_context()
        transport = ShieldedTransport(self._backend, ssl_context=context, proxy=settings.proxy)
        timeout = httpx.Timeout(settings.total_timeout_s, connect=settings.connect_timeout_s)
        # Identity: a compressed body would make the byte cap a cap on the compressed size.
        headers = {
            "User-Agent": settings.user_agent,
            "Accept": ACCEPT,
            "Accept-Encoding": "identity",
        }
        hops: list[str] = []
        # The transport is used as it is, without httpx's client: the client parses a redirect's
        # Location itself (and rejects spellings the shield must see to refuse by name).
        try:
            current = url
            while True:
                trace.final_url = current[:2048]  # the hop refused, if the shield refuses it
                checked = settings.policy.check_url(current)
                hops.append(checked.url)
                trace.final_url = checked.url
                if settings.proxy is not None:
                    # The proxy connects, so the connector never sees the target: its addresses
                    # are checked here, from the bridge's own lookup (docs/security.md).
                    await settings.policy.admit(checked.host.name, checked.port, self._resolver)
                request = httpx.Request(
                    "GET", checked.url, headers=headers, extensions={"timeout": timeout.as_dict()}
                )
                try:
                    response = await transport.handle_async_request(request)
                    try:
                        location = response.headers.get("location")
                        if response.status_code in REDIRECTS and location:
                            if len(hops) > settings.max_redirects:
                                raise FetchRefused(
                                    "too_many_redirects",
                                    f"more than {settings.max_redirects} redirects",
                                )
                            current = urljoin(checked.url, location)
                            continue
                        return await self._read(
                            response, url, checked.url, hops, limit, trace, deadline, redaction
                        )
                    finally:
                        await response.aclose()
                except httpx.TimeoutException as exc:
                    raise FetchFailed("timeout", f"{checked.url}: timed out ({exc})") from None
                except httpx.HTTPError as exc:
                    raise FetchFailed("network", f"{checked.url}: {exc}") from None
        finally:
            await transport.aclose()

    async def _read(
        self,
        response: httpx.Response,
        url: str,
        final_url: str,
        hops: list[str],
        limit: int,
        trace: FetchTrace,
        deadline: float,
        redaction: Sequence[RedactionRule],
    ) -> Page:
        if not 200 <= response.status_code < 300:
            reason = response.reason_phrase or "error"
            raise FetchRefused(
                "http_status", f"the server answered {response.status_code} {reason}"
            )
        media = MediaType.parse(response.headers.get("content-type"))
        kind = text_kind(media)
        # Kept as the chunks that came (each read step's work is one chunk, whatever the
        # page's size): never joined here, the worker's pipe takes them one by one.
        body: list[bytes] = []
        size = 0
        cut = False
        async for chunk in response.aiter_raw():
            room = self.settings.max_bytes - size
            if len(chunk) > room:
                body.append(chunk[:room])
                size = trace.bytes_read = self.settings.max_bytes
                cut = True
                break
            body.append(chunk)
            size = trace.bytes_read = size + len(chunk)
        encoding: str | None = response.headers.get("content-encoding", "").strip().lower()
        if encoding in ("", "identity"):
            encoding = None
        elif encoding not in ENCODINGS:
            raise FetchRefused("not_text", f"the body is compressed with {encoding}, not read")
        pool = self._extraction if self._extraction is not None else shared_pool()
        try:
            # A compressed body is inflated in the worker (bounded there), never on this loop.
            reading = await pool.read(
                body,
                kind=kind,
                media=media,
                url=final_url,
                limit=limit,
                deadline=deadline,
                encoding=encoding,
                cap=self.settings.max_bytes,
                redaction=redaction,
            )
        except ExtractionRefused as exc:
            raise FetchRefused("not_text", f"{final_url}: {exc}") from None
        except ExtractionCut as exc:
            raise FetchFailed("timeout", f"{final_url}: {exc}") from None
        except ExtractionFailed as exc:
            raise FetchFailed("extraction", f"{final_url}: {exc}") from None
        notes = [reading.note] if reading.note else []
        if reading.refused_charset is not None:
            notes.append(
                f"the page names its charset {reading.refused_charset!r}, which is not a text "
                "encoding web_fetch reads: read as UTF-8, undecodable bytes replaced"
            )
        return Page(
            url=url,
            final_url=final_url,
            status=response.status_code,
            content_type=media.essence,
            charset=reading.charset,
            title=reading.title,
            text=reading.text,
            truncated=cut or reading.truncated,
            bytes_read=size,
            hops=tuple(hops),
            extractor=reading.extractor,
            note="; ".join(notes) or None,
        )


def _origin(proxy: str | None) -> tuple[str, int] | None:
    if proxy is None:
        return None
    parts = urlsplit(proxy)
    return (parts.hostname or "", parts.port or 80)


__all__ = ["FetchSettings", "FetchTrace", "Page", "ShieldRefused", "WebFetcher"]
