"""What a fetch or a search does on the event loop: nothing whose cost a page chooses or that
takes tens of milliseconds (a player's turn shares the loop). Timings are the bench's
(``bench/web_bench.py --hostile``); these tests pin where the work runs."""

from __future__ import annotations

import fcntl
import json
import os
import ssl
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from bridge import tls_trust
from bridge.redaction import Redactor
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.registry import CallContext, ToolRegistry
from bridge.tools.web_tools import WebTools
from bridge.web import connector
from bridge.web import search as search_module
from bridge.web.extraction_pool import ExtractionPool, Reading
from bridge.web.fetch import FetchSettings, WebFetcher
from bridge.web.search import SearchSettings, WebSearch
from tests.tools.test_web_tools import DEFAULT_TOOLS
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
    monkeypatch.setattr(tls_trust, "_contexts", {})  # the process's, shared with providers
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


async def test_a_worker_pipe_holds_a_page_of_a_megabyte_whole() -> None:
    """A body goes into its worker's pipe from a thread of the bridge: at the default 64 KiB
    a page of a megabyte woke that thread (and took the GIL from the loop) 16 times, six such
    pages about a hundred; a pipe that holds the page takes it in one write."""
    pool = ExtractionPool(workers=1)
    try:
        async with LoopbackSite() as site:
            site.page("/Anvil", PAGE)
            network = wiki(site.port)
            fetcher = WebFetcher(
                FetchSettings(), resolver=network.resolve, dialer=network.dial, extraction=pool
            )
            await fetcher.fetch("http://wiki.example/Anvil")
            [worker] = pool.worker_pids()
            fds = f"/proc/{worker}/fd"
            pipes = [fd for fd in os.listdir(fds) if os.readlink(f"{fds}/{fd}").startswith("pipe:")]
            sizes = [_pipe_size(f"{fds}/{fd}") for fd in pipes]
    finally:
        pool.close()
    assert len(sizes) == 2  # the job's way in, the answer's way out
    assert min(sizes) >= 1_000_000


def _pipe_size(path: str) -> int:
    """The capacity of the pipe at ``path`` (a worker's end of it, opened through /proc)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        return fcntl.fcntl(descriptor, fcntl.F_GETPIPE_SZ)
    finally:
        os.close(descriptor)


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


class _Watched(Redactor):
    """The bridge's redactor, keeping every text it scans rule by rule (what costs the loop in
    proportion to a text's matches: 6 ms per 20,000 characters of key-shaped strings)."""

    def __init__(self) -> None:
        super().__init__()
        self.scanned: list[str] = []

    def redact_text(self, text: str) -> str:
        self.scanned.append(text)
        return super().redact_text(text)


def _web_fetch(redactor: Redactor, fetcher: WebFetcher) -> ToolInvoker:
    """``web_fetch`` as a turn calls it: the invoker redacting with the same redactor."""
    tools = WebTools(fetcher, None, audit=MemoryAudit(), redactor=redactor)
    registry = ToolRegistry.from_tools_file(DEFAULT_TOOLS, tools.handlers())
    return ToolInvoker(
        registry.for_player(frozenset()),
        cooldowns=Cooldowns(cooldown_ms=0),
        redactor=redactor,
        audit=MemoryAudit(),
    )


KEYS = [f"sk-{index:04d}abcdefghijklmnopqrstuvwxyz" for index in range(400)]
CONTEXT = CallContext(turn_id="t1", call_id="c1", player_uuid="u-1", player_name="Alex")


async def test_a_page_of_keys_is_redacted_in_the_worker_not_on_the_loop() -> None:
    """The page's text and title come back redacted by the worker that read them: the
    invoker's redaction of the result, on the loop, scans none of the page's words."""
    paragraphs = "".join(
        f"<p>Key number {n} is {key} for the anvil.</p>" for n, key in enumerate(KEYS)
    )
    html = f"<html><head><title>Anvil {KEYS[0]}</title></head><body><article>{paragraphs}"
    redactor = _Watched()
    outcome = await _fetched(redactor, "/keys", html + "</article></body></html>", 200_000)
    assert outcome.ok and isinstance(outcome.result, dict)
    text = outcome.result["text"]
    assert "Title: Anvil [redacted: api key]" in text
    assert text.count("[redacted: api key]") == len(KEYS) + 1
    assert not any(key in text for key in KEYS)
    assert not any("anvil" in scanned for scanned in redactor.scanned)


async def _fetched(
    redactor: Redactor, path: str, body: str, max_chars: int, content_type: str = "text/html"
) -> Any:
    """``web_fetch`` of one loopback page through an extraction pool of its own."""
    pool = ExtractionPool(workers=1)
    try:
        async with LoopbackSite() as site:
            site.page(path, body, content_type)
            network = wiki(site.port)
            fetcher = WebFetcher(
                FetchSettings(max_chars=max_chars),
                resolver=network.resolve,
                dialer=network.dial,
                extraction=pool,
            )
            return await _web_fetch(redactor, fetcher).invoke(
                "web_fetch", {"url": f"http://wiki.example{path}"}, CONTEXT
            )
    finally:
        pool.close()


async def test_a_key_the_cut_to_max_chars_would_split_is_redacted_whole_first() -> None:
    """Redact, then cut: cut first, the head of a key left at the limit no longer looks like
    one (``sk-`` and seven characters) and went out as it was."""
    limit = 256
    text = "x" * (limit - 10) + " sk-0123456789abcdefghijklmnopq and more"
    outcome = await _fetched(Redactor(), "/notes.txt", text, limit, "text/plain")
    assert outcome.ok and isinstance(outcome.result, dict)
    quoted = outcome.result["text"]
    assert "sk-0" not in quoted
    assert " [redac" in quoted
