"""Pages written to stall or crash the reader, from a real HTTP server on loopback: a table
trafilatura needs minutes for, charsets that are Python codecs but no text encodings, a title
that would speak outside the quote, a search backend that drips; every outcome audited."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import pytest

from bridge.redaction import Redactor
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.registry import CallContext, ToolRegistry
from bridge.tools.web_tools import WebTools
from bridge.web.errors import FetchFailed, SearchFailed, ShieldRefused
from bridge.web.extraction_pool import ExtractionPool
from bridge.web.fetch import FetchSettings, WebFetcher
from bridge.web.search import SearchSettings, WebSearch
from tests.support.proc_stat import (
    NICENESS,
    PROCESS_GROUP,
    SCHED_POLICY,
    SESSION,
    autogroup,
    stat_fields,
)
from tests.tools.test_web_tools import DEFAULT_TOOLS
from tests.web.network import ScriptedNetwork, wiki
from tests.web.site import LoopbackSite, Route

CONTEXT = CallContext(turn_id="t1", call_id="c1", player_uuid="u-1", player_name="Alex")
HANG_GUARD_S = 60.0
"""Bounds a wait that never ends on the code before the fix; never a measured threshold."""
NORMAL = (
    "<html><head><title>Furnace</title></head><body><article><h1>Furnace</h1><p>A furnace "
    "smelts ores and cooks food using fuel such as coal or charcoal, one item at a time, and "
    "it is one of the first blocks a player makes.</p></article></body></html>"
)


def one_row_table(size: int) -> str:
    """The shape trafilatura is worse than linear on: one table row of ``size`` bytes."""
    cells = "<td>cell</td>" * (size // 13)
    head = "<html><head><title>Table</title></head><body>"
    return f"{head}<table><tr>{cells}</tr></table></body></html>"


def fetcher(network: ScriptedNetwork, pool: ExtractionPool, **settings: Any) -> WebFetcher:
    return WebFetcher(
        FetchSettings(**settings), resolver=network.resolve, dialer=network.dial, extraction=pool
    )


def invoker(tools: WebTools, audit: MemoryAudit) -> ToolInvoker:
    registry = ToolRegistry.from_tools_file(DEFAULT_TOOLS, tools.handlers())
    return ToolInvoker(
        registry.for_player(frozenset()),
        cooldowns=Cooldowns(cooldown_ms=0),
        redactor=Redactor(),
        audit=audit,
    )


@pytest.fixture
async def pool() -> Any:
    own = ExtractionPool(workers=1)
    yield own
    own.close()


async def test_a_one_row_table_of_a_megabyte_ends_at_the_deadline_with_plain_text(
    pool: ExtractionPool,
) -> None:
    async with LoopbackSite() as site:
        site.page("/table", one_row_table(1_000_000))
        site.page("/furnace", NORMAL)
        network = wiki(site.port)
        web = fetcher(network, pool, total_timeout_s=5.0)
        async with asyncio.timeout(HANG_GUARD_S):
            page = await web.fetch("http://wiki.example/table")
        # trafilatura was cut off at the deadline; the linear fallback's text came back.
        assert page.extractor == "plain"
        assert page.note is not None and "cut off at the fetch's deadline" in page.note
        assert page.title == "Table" and page.text.startswith("cell cell cell")
        # Its worker was killed, not left running: a fresh one reads the next page.
        assert pool.spawned == 2
        normal = await web.fetch("http://wiki.example/furnace")
    assert normal.extractor == "trafilatura" and "smelts ores" in normal.text
    assert pool.spawned == 2


async def test_a_page_still_waiting_for_a_worker_at_its_deadline_comes_back_as_plain_text(
    pool: ExtractionPool,
) -> None:
    async with LoopbackSite() as site:
        site.page("/table", one_row_table(1_000_000))
        site.page("/waiting", one_row_table(200_000).replace("Table", "Waiting"))
        network = wiki(site.port)
        busy = asyncio.create_task(
            fetcher(network, pool, total_timeout_s=60.0).fetch("http://wiki.example/table")
        )
        while pool.pending < 1:  # the table is in the only worker (trafilatura, for minutes)
            await asyncio.sleep(0.01)
        async with asyncio.timeout(HANG_GUARD_S):
            page = await fetcher(network, pool, total_timeout_s=4.0).fetch(
                "http://wiki.example/waiting"
            )
        busy.cancel()
        with pytest.raises(asyncio.CancelledError):
            await busy
    # Never in a worker: the plain lane made its plain text while it waited.
    assert page.extractor == "plain" and page.title == "Waiting"
    assert page.text.startswith("cell cell cell")
    assert page.note == (
        "no extraction worker was free before the deadline for trafilatura; plain text of the page"
    )


@pytest.mark.parametrize("codec", ["hex", "rot13", "base64", "zlib", "idna", "utf-7", "nonsense"])
@pytest.mark.parametrize("where", ["header", "meta"])
async def test_a_charset_that_is_no_text_encoding_is_read_as_utf8_and_said(
    codec: str, where: str
) -> None:
    body = f'<html><head><meta charset="{codec}"><title>Größe</title></head><body><article>'
    body += "<p>Ein Ofen schmilzt Erze und kocht Essen mit Kohle, ein Stück nach dem anderen, "
    body += "und ist einer der ersten Blöcke, die ein Spieler baut.</p></article></body></html>"
    content_type = f"text/html; charset={codec}" if where == "header" else "text/html"
    audit = MemoryAudit()
    async with LoopbackSite() as site:
        site.page("/ofen", body.encode(), content_type)
        network = wiki(site.port)
        tools = WebTools(
            WebFetcher(FetchSettings(), resolver=network.resolve, dialer=network.dial),
            None,
            audit=audit,
            redactor=Redactor(),
        )
        outcome = await invoker(tools, audit).invoke(
            "web_fetch", {"url": "http://wiki.example/ofen"}, CONTEXT
        )
    assert outcome.ok, outcome
    assert outcome.result["charset"] == "utf-8"
    assert f"charset '{codec}'" in outcome.result["note"]
    assert "Größe" in outcome.result["text"] and "schmilzt Erze" in outcome.result["text"]
    [(_, fields)] = [e for e in audit.events if e[0] == "web.fetch"]
    assert fields["outcome"] == "ok"


async def test_a_refusal_says_the_address_once() -> None:
    with pytest.raises(ShieldRefused) as refused:
        await WebFetcher(FetchSettings()).fetch("http://127.0.0.1/")
    assert str(refused.value) == (
        "refused by the web shield (rule loopback): 127.0.0.1 is loopback (RFC 1122)"
    )
    network = ScriptedNetwork()
    network.name("intranet.example", ["10.1.2.3"])
    with pytest.raises(ShieldRefused) as named:
        await WebFetcher(FetchSettings(), resolver=network.resolve).fetch(
            "http://intranet.example/"
        )
    assert str(named.value).count("10.1.2.3") == 1 and "intranet.example" in str(named.value)


async def test_a_search_backend_dripping_a_byte_every_two_seconds_is_cut_at_the_deadline() -> None:
    audit = MemoryAudit()
    async with LoopbackSite() as site:
        site.routes["/search?q=furnace&format=json"] = Route(
            headers={"Content-Type": "application/json"}, drip_s=2.0
        )
        search = WebSearch(SearchSettings("searxng", f"http://127.0.0.1:{site.port}", timeout_s=3))
        with pytest.raises(SearchFailed) as failed:
            async with asyncio.timeout(HANG_GUARD_S):
                await search.search("furnace")
        assert failed.value.timed_out and "within 3 s" in str(failed.value)
        tools = WebTools(WebFetcher(FetchSettings()), search, audit=audit, redactor=Redactor())
        async with asyncio.timeout(HANG_GUARD_S):
            outcome = await invoker(tools, audit).invoke(
                "web_search", {"query": "furnace"}, CONTEXT
            )
    assert outcome.error_code == "timeout"
    [(_, fields)] = [e for e in audit.events if e[0] == "web.search"]
    assert fields["outcome"] == "failed"


async def test_a_fetch_cancelled_or_failing_unexpectedly_is_still_audited() -> None:
    audit = MemoryAudit()
    closed = ExtractionPool(workers=1)
    closed.close()
    async with LoopbackSite() as site:
        site.page("/furnace", NORMAL)
        site.routes["/drip"] = Route(drip_s=2.0)
        network = wiki(site.port)
        tools = WebTools(fetcher(network, closed), None, audit=audit, redactor=Redactor())
        with pytest.raises(RuntimeError):
            await tools.web_fetch({"url": "http://wiki.example/furnace"}, CONTEXT)
        dripping = asyncio.create_task(
            tools.web_fetch({"url": "http://wiki.example/drip"}, CONTEXT)
        )
        while len(site.seen) < 2:  # the drip server has the request: the fetch is reading
            await asyncio.sleep(0.01)
        dripping.cancel()
        with pytest.raises(asyncio.CancelledError):
            await dripping
    outcomes = [fields["outcome"] for kind, fields in audit.events if kind == "web.fetch"]
    assert outcomes == ["failed:internal:RuntimeError", "cancelled"]


async def test_a_worker_that_cannot_start_is_a_clear_failure_not_a_timeout() -> None:
    """Too little memory to import its parsers (as a broken install cannot import them): the
    worker ends at once, and the fetch says so instead of waiting for its deadline."""
    starved = ExtractionPool(workers=1, memory_bytes=24 << 20)
    try:
        async with LoopbackSite() as site:
            site.page("/furnace", NORMAL)
            network = wiki(site.port)
            with pytest.raises(FetchFailed) as failed:
                async with asyncio.timeout(HANG_GUARD_S):
                    await fetcher(network, starved).fetch("http://wiki.example/furnace")
    finally:
        starved.close()
    assert failed.value.kind == "extraction"
    assert "the extraction worker ended before reading the page" in str(failed.value)


async def test_a_worker_that_died_between_pages_is_replaced_for_the_next_page(
    pool: ExtractionPool,
) -> None:
    """Killed from outside while idle (the kernel's OOM killer, an operator): the thread that
    drove it wrote the next job into the dead pipe, died of the BrokenPipeError its cleanup
    raised, and left the page waiting past its deadline and every later page without a
    worker."""
    async with LoopbackSite() as site:
        site.page("/furnace", NORMAL)
        web = fetcher(wiki(site.port), pool, total_timeout_s=10.0)
        assert (await web.fetch("http://wiki.example/furnace")).extractor == "trafilatura"
        [worker] = pool.worker_pids()
        died = os.pidfd_open(worker)  # readable once it has ended, reaped or not
        try:
            os.kill(worker, signal.SIGKILL)
            await _readable(died)
        finally:
            os.close(died)
        for _ in range(2):
            async with asyncio.timeout(HANG_GUARD_S):
                page = await web.fetch("http://wiki.example/furnace")
            assert page.extractor == "trafilatura" and "smelts ores" in page.text
    assert pool.spawned == 2


async def _readable(fd: int) -> None:
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    loop.add_reader(fd, ready.set_result, None)
    try:
        async with asyncio.timeout(HANG_GUARD_S):
            await ready
    finally:
        loop.remove_reader(fd)


@pytest.mark.parametrize("plain_only", [False, True], ids=["worker", "plain-lane"])
async def test_extraction_workers_run_in_the_idle_class_at_the_lowest_niceness_in_the_bridges_group(
    plain_only: bool,
) -> None:
    """A stranger's page is parsed only when the bridge's loop does not want the CPU: the
    workers (the plain lane's too) put themselves in Linux's idle scheduling class, and at
    niceness 19 where that class is missing, in the bridge's own scheduling group. Read from
    /proc, as the kernel schedules them."""
    own = ExtractionPool(workers=1, plain_only=plain_only)
    try:
        async with LoopbackSite() as site:
            site.page("/furnace", NORMAL)
            async with asyncio.timeout(HANG_GUARD_S):
                await fetcher(wiki(site.port), own).fetch("http://wiki.example/furnace")
            [worker] = own.worker_pids()
            worker_stat, bridge_stat = stat_fields(worker), stat_fields(os.getpid())
            groups = autogroup(worker), autogroup(os.getpid())
    finally:
        own.close()
    assert worker_stat[SCHED_POLICY] == str(os.SCHED_IDLE)
    assert worker_stat[NICENESS] == "19"
    # The bridge's session, so the bridge's scheduling group (autogroup): in one of its own
    # the worker weighed as much as the whole bridge, its class and niceness counted only
    # inside it. A process group of its own: a Ctrl-C at the terminal is the bridge's.
    assert worker_stat[SESSION] == bridge_stat[SESSION]
    assert groups[0] == groups[1]
    assert worker_stat[PROCESS_GROUP] != bridge_stat[PROCESS_GROUP]
