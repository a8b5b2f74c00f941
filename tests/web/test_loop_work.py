"""What a fetch or a search does on the event loop: nothing whose cost a page chooses or that
takes tens of milliseconds (a player's turn shares the loop). Timings are the bench's
(``bench/web_bench.py --hostile``); these tests pin where the work runs."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from bridge.web import connector
from bridge.web import search as search_module
from bridge.web.extraction_pool import ExtractionPool, Reading
from bridge.web.fetch import FetchSettings, WebFetcher
from bridge.web.search import SearchSettings, WebSearch
from tests.web.network import wiki
from tests.web.site import LoopbackSite

CHUNK = 65_536
"""The most one read of a response's body gives (httpcore reads 64 KiB at a time)."""
PAGE = "<html><head><title>Anvil</title></head><body><p>An anvil repairs tools.</p></body></html>"


async def test_the_tls_context_is_made_once_and_off_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Making a verifying TLS context loads the whole CA bundle (about 25 ms of CPU): each
    fetch and each search made one on the loop, six pages at once some 150 ms."""
    made: list[int] = []
    real = ssl.create_default_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        made.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counted)
    monkeypatch.setattr(connector, "_context", None, raising=False)
    async with LoopbackSite() as site:
        site.page("/Anvil", PAGE)
        site.page("/search?q=anvil&format=json", json.dumps({"results": []}), "application/json")
        network = wiki(site.port)
        fetcher = WebFetcher(FetchSettings(), resolver=network.resolve, dialer=network.dial)
        search = WebSearch(SearchSettings("searxng", f"http://127.0.0.1:{site.port}"))
        for _ in range(3):
            assert "repairs tools" in (await fetcher.fetch("http://wiki.example/Anvil")).text
            assert await search.search("anvil") == []
    assert len(made) == 1
    assert made[0] != threading.get_ident()  # not the loop's thread


class _Recording(ExtractionPool):
    """The real pool, recording the body each page hands it."""

    def __init__(self) -> None:
        super().__init__(workers=1)
        self.bodies: list[Sequence[bytes]] = []

    async def read(self, body: Sequence[bytes], **job: Any) -> Reading:
        self.bodies.append(body)
        return await super().read(body, **job)


async def test_a_large_body_reaches_the_worker_as_the_chunks_read_never_joined() -> None:
    """Joining a body (growing one buffer, copying it out, prefixing its frame) is work in
    proportion to the page, on the loop and then under the GIL in the worker's thread; the
    chunks as read are each one read's worth, and the pipe takes them one by one."""
    pool = _Recording()
    try:
        async with LoopbackSite() as site:
            site.page("/big", "<html><body><p>" + "stone " * 200_000 + "</p></body></html>")
            network = wiki(site.port)
            fetcher = WebFetcher(
                FetchSettings(), resolver=network.resolve, dialer=network.dial, extraction=pool
            )
            page = await fetcher.fetch("http://wiki.example/big")
    finally:
        pool.close()
    assert page.text.startswith("stone stone") and page.bytes_read > 1_000_000
    [body] = pool.bodies
    assert not isinstance(body, bytes | bytearray)
    assert sum(len(chunk) for chunk in body) == page.bytes_read
    assert max(len(chunk) for chunk in body) <= CHUNK


async def test_a_search_answer_of_thousands_of_results_parses_only_the_snippets_returned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each snippet's markup is read by lxml on the loop: all 3,000 of a megabyte's answer took
    some 200 ms of it, for the five returned."""
    parsed: list[str] = []
    real = search_module._plain

    def counted(fragment: str) -> str:
        parsed.append(fragment)
        return real(fragment)

    monkeypatch.setattr(search_module, "_plain", counted)
    results = [
        {"title": f"<b>Anvil</b> {n}", "url": f"https://wiki.example/{n}", "content": "<i>x</i>"}
        for n in range(3000)
    ]
    async with LoopbackSite() as site:
        site.page(
            "/search?q=anvil&format=json", json.dumps({"results": results}), "application/json"
        )
        search = WebSearch(SearchSettings("searxng", f"http://127.0.0.1:{site.port}"))
        hits = await search.search("anvil", 5)
    assert [hit.url for hit in hits] == [f"https://wiki.example/{n}" for n in range(5)]
    assert hits[0].title == "Anvil 0" and hits[0].snippet == "x"
    assert len(parsed) == 2 * 5  # a title and a snippet per hit returned
