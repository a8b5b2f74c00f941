"""web_fetch end to end over loopback: injected names, real HTTP, the shield on every hop."""

from __future__ import annotations

import codecs

import pytest

from bridge.web.errors import FetchFailed, FetchRefused, ShieldRefused
from bridge.web.fetch import FetchSettings, FetchTrace, WebFetcher
from bridge.web.shield import ShieldPolicy
from tests.web.network import PUBLIC_A, PUBLIC_B, ScriptedNetwork, wiki
from tests.web.site import LoopbackSite, Route

ARTICLE = """<!doctype html><html><head><meta charset="utf-8"><title>Crafting Table</title>
<script>var x = "do not show";</script><style>p{}</style></head><body>
<nav><a href="/">Home</a> <a href="/random">Random page</a></nav>
<article><h1>Crafting Table</h1><p>A crafting table gives access to a 3x3 crafting grid and is
one of the first blocks a player makes in a new world, from four planks.</p>
<h2>Usage</h2><p>Open it to craft the <a href="/Furnace">furnace</a> and most tools; recipes
with more than four ingredients need it.</p></article>
<footer>Privacy policy - About - Disclaimers</footer></body></html>"""


SHIFT_JIS_PAGE = (
    '<html><head><meta charset="shift_jis"><title>作業台</title></head><body><article>'
    "<p>作業台は三かける三のクラフトグリッドを使えるブロックです。木材四つで作ります。"
    "</p></article></body></html>"
)


def fetcher(network: ScriptedNetwork, **settings: object) -> WebFetcher:
    return WebFetcher(
        FetchSettings(**settings),  # type: ignore[arg-type]
        resolver=network.resolve,
        dialer=network.dial,
    )


async def test_a_page_comes_back_as_text_with_title_and_absolute_links() -> None:
    async with LoopbackSite() as site:
        site.page("/Crafting_Table", ARTICLE)
        network = wiki(site.port)
        page = await fetcher(network).fetch("http://wiki.example/Crafting_Table")
    assert page.title == "Crafting Table"
    assert "3x3 crafting grid" in page.text
    assert "[furnace](http://wiki.example/Furnace)" in page.text
    assert "do not show" not in page.text and "Random page" not in page.text
    assert "Privacy policy" not in page.text
    assert page.final_url == "http://wiki.example/Crafting_Table"
    assert page.content_type == "text/html" and page.charset == "utf-8"
    assert not page.truncated
    # The connection went to the checked address; the name went in the Host header.
    assert network.dials == [(PUBLIC_A, 80)]
    assert site.seen[0].host == "wiki.example"


async def test_a_second_lookup_answering_loopback_decides_nothing() -> None:
    """The rebinding attack: the first answer is public, every later one 127.0.0.1. There is
    exactly one lookup per connection, and the socket goes to the address that was checked."""
    async with LoopbackSite() as site:
        site.page("/a", ARTICLE)
        site.page("/b", ARTICLE)
        network = ScriptedNetwork()
        network.name("rebind.example", [PUBLIC_A], ["127.0.0.1"])
        network.route(PUBLIC_A, site.port)
        page = await fetcher(network).fetch("http://rebind.example/a")
        assert "crafting grid" in page.text
        assert network.lookups == ["rebind.example"]
        assert network.dials == [(PUBLIC_A, 80)]
        # The next fetch makes a new connection and so a new lookup: now refused by its answer.
        with pytest.raises(ShieldRefused) as refused:
            await fetcher(network).fetch("http://rebind.example/b")
    assert refused.value.rule == "loopback"
    assert network.dials == [(PUBLIC_A, 80)]  # never dialled 127.0.0.1


async def test_a_name_with_one_private_answer_among_public_ones_is_refused_whole() -> None:
    network = ScriptedNetwork()
    network.name("mixed.example", [PUBLIC_A, "10.0.0.5"])
    with pytest.raises(ShieldRefused) as refused:
        await fetcher(network).fetch("http://mixed.example/")
    assert refused.value.rule == "private"
    assert network.dials == []


@pytest.mark.parametrize(
    ("location", "rule"),
    [
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://2130706433/", "loopback"),
        ("http://0177.0.0.1/", "loopback"),
        ("http://[::ffff:169.254.169.254]/", "ipv4-mapped"),
        ("http://[fd00::1]/", "unique-local"),
        ("http://internal.example/", "private"),
        ("http://wiki.example:8080/", "port"),
        ("file:///etc/passwd", "scheme"),
        ("gopher://wiki.example/", "scheme"),
        ("http://user:pw@wiki.example/", "credentials"),
        ("http://localhost/", "localhost"),
    ],
)
async def test_every_redirect_hop_is_checked(location: str, rule: str) -> None:
    async with LoopbackSite() as site:
        site.redirect("/go", location)
        network = ScriptedNetwork()
        network.name("wiki.example", [PUBLIC_A])
        network.name("internal.example", ["192.168.1.10"])
        network.route(PUBLIC_A, site.port)
        trace = FetchTrace()
        with pytest.raises(ShieldRefused) as refused:
            await fetcher(network).fetch("http://wiki.example/go", trace=trace)
    assert refused.value.rule == rule
    assert network.dials == [(PUBLIC_A, 80)]  # only the first hop connected
    assert trace.final_url is not None and trace.final_url != "http://wiki.example/go"


async def test_a_redirect_chain_across_hosts_is_followed_and_reported() -> None:
    async with LoopbackSite() as site:
        site.redirect("/old", "http://mirror.example/moved", 301)
        site.redirect("/moved", "/final", 308)
        site.page("/final", ARTICLE)
        network = ScriptedNetwork()
        network.name("wiki.example", [PUBLIC_A])
        network.name("mirror.example", [PUBLIC_B])
        network.route(PUBLIC_A, site.port)
        network.route(PUBLIC_B, site.port)
        page = await fetcher(network).fetch("http://wiki.example/old")
    assert page.hops == (
        "http://wiki.example/old",
        "http://mirror.example/moved",
        "http://mirror.example/final",
    )
    assert page.final_url == "http://mirror.example/final"
    assert [seen.host for seen in site.seen] == ["wiki.example", "mirror.example", "mirror.example"]


async def test_redirects_are_capped() -> None:
    async with LoopbackSite() as site:
        for n in range(10):
            site.redirect(f"/{n}", f"/{n + 1}")
        network = wiki(site.port)
        with pytest.raises(FetchRefused) as refused:
            await fetcher(network, max_redirects=3).fetch("http://wiki.example/0")
    assert refused.value.kind == "too_many_redirects"
    assert len(site.seen) == 4


async def test_an_endless_body_is_read_only_to_the_byte_cap() -> None:
    async with LoopbackSite() as site:
        site.routes["/endless"] = Route(forever=True)
        network = wiki(site.port)
        page = await fetcher(network, max_bytes=100_000).fetch("http://wiki.example/endless")
    assert page.truncated
    assert page.bytes_read == 100_000


@pytest.mark.parametrize(
    ("content_type", "said"),
    [
        ("application/pdf", "a PDF document"),
        ("image/png", "an image"),
        ("video/mp4", "a video"),
        ("application/octet-stream", "binary data"),
        ("application/x-shockwave-flash", "content of type application/x-shockwave-flash"),
    ],
)
async def test_non_text_is_refused_with_what_it_is(content_type: str, said: str) -> None:
    async with LoopbackSite() as site:
        site.page("/file", b"%PDF-1.7 \x00\x01", content_type)
        network = wiki(site.port)
        with pytest.raises(FetchRefused) as refused:
            await fetcher(network).fetch("http://wiki.example/file")
    assert refused.value.kind == "not_text"
    assert said in str(refused.value)


@pytest.mark.parametrize(
    ("body", "content_type", "charset", "expected"),
    [
        (
            "Größe: 3×3".encode("latin-1", "replace"),
            "text/plain; charset=ISO-8859-1",
            "iso-8859-1",
            "Größe",
        ),
        (
            "Größe: Werkbank".encode("cp1252"),
            "text/plain; charset=windows-1252",
            "windows-1252",
            "Größe",
        ),
        (SHIFT_JIS_PAGE.encode("shift_jis"), "text/html", "shift_jis", "作業台"),
        (codecs.BOM_UTF8 + "UTF-8 with a BOM: Größe".encode(), "text/plain", "utf-8-sig", "Größe"),
        ('{"name": "Größe"}'.encode(), "application/json", "utf-8", "Größe"),
    ],
)
async def test_the_charset_is_the_declared_or_sniffed_one(
    body: bytes, content_type: str, charset: str, expected: str
) -> None:
    async with LoopbackSite() as site:
        site.page("/t", body, content_type)
        network = wiki(site.port)
        page = await fetcher(network).fetch("http://wiki.example/t")
    assert page.charset == charset
    assert expected in page.text or expected in (page.title or "")


async def test_text_is_cut_to_max_chars_and_says_so() -> None:
    async with LoopbackSite() as site:
        site.page("/long", "word " * 10_000, "text/plain")
        network = wiki(site.port)
        page = await fetcher(network, max_chars=5000).fetch(
            "http://wiki.example/long", max_chars=100
        )
    assert len(page.text) == 100 and page.truncated


async def test_an_http_error_status_is_not_read() -> None:
    async with LoopbackSite() as site:
        network = wiki(site.port)
        with pytest.raises(FetchRefused) as refused:
            await fetcher(network).fetch("http://wiki.example/missing")
    assert refused.value.kind == "http_status" and "404" in str(refused.value)


async def test_a_name_that_does_not_resolve_is_a_network_failure() -> None:
    with pytest.raises(FetchFailed) as failed:
        await fetcher(ScriptedNetwork()).fetch("http://nowhere.example/")
    assert failed.value.kind == "network"


async def test_an_allowed_private_host_is_fetched() -> None:
    """The owner's exception: a listed name may resolve to a private address."""
    async with LoopbackSite() as site:
        site.page("/", ARTICLE)
        network = ScriptedNetwork()
        network.name("panel.lan", ["192.168.1.20"])
        network.route("192.168.1.20", site.port)
        policy = ShieldPolicy(allow_private_hosts=("panel.lan",))
        page = await fetcher(network, policy=policy).fetch("http://panel.lan/")
        assert "crafting grid" in page.text
        # Another name resolving to that address is still refused.
        network.name("other.lan", ["192.168.1.20"])
        with pytest.raises(ShieldRefused):
            await fetcher(network, policy=policy).fetch("http://other.lan/")


async def test_a_configured_port_is_allowed() -> None:
    async with LoopbackSite() as site:
        site.page("/", ARTICLE)
        network = ScriptedNetwork()
        network.name("wiki.example", [PUBLIC_A])
        network.route(PUBLIC_A, site.port, port=8080)
        policy = ShieldPolicy(allow_ports=frozenset({80, 443, 8080}))
        page = await fetcher(network, policy=policy).fetch("http://wiki.example:8080/")
    assert page.final_url == "http://wiki.example:8080/"
    assert network.dials == [(PUBLIC_A, 8080)]


@pytest.mark.parametrize(
    ("chain", "rule"),
    [
        # protocol-relative and scheme-changing hops
        (["//169.254.169.254/latest/"], "link-local"),
        (["https://0x7f.1/"], "loopback"),
        (["http://[::ffff:a9fe:a9fe]/"], "ipv4-mapped"),
        (["http://[64:ff9b::7f00:1]/"], "nat64-loopback"),
        (["http://[2002:c0a8:101::]/"], "6to4-private"),
        # public hops first, then the private one
        (["/step2", "http://mirror.example/step3", "http://10.0.0.1/"], "private"),
        (["http://mirror.example/next", "http://rebind.example/"], "loopback"),
        (["/a", "/b", "http://169.254.169.254:80/"], "link-local"),
        (["http://wiki.example:443/"], None),  # a port that is allowed, over http: refused later
    ],
)
@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_redirect_chains_end_at_the_refused_hop(
    chain: list[str], rule: str | None, status: int
) -> None:
    async with LoopbackSite() as site:
        path = "/start"
        for location in chain:
            site.redirect(path, location, status)
            # Every public name is routed to this one site: the next hop is found by its path.
            relative = location.startswith("/") and not location.startswith("//")
            path = location if relative else "/" + location.split("/", 3)[3]
        network = ScriptedNetwork()
        network.name("wiki.example", [PUBLIC_A])
        network.name("mirror.example", [PUBLIC_B])
        network.name("rebind.example", ["127.0.0.1"])
        network.route(PUBLIC_A, site.port)
        network.route(PUBLIC_B, site.port)
        with pytest.raises((ShieldRefused, FetchFailed)) as stopped:
            await fetcher(network).fetch("http://wiki.example/start")
    if rule is None:
        assert isinstance(stopped.value, FetchFailed)  # no route to 443: it never reached TLS
    else:
        assert isinstance(stopped.value, ShieldRefused) and stopped.value.rule == rule
    # Nothing refused was ever dialled: every dial went to a checked public address.
    assert {address for address, _ in network.dials} <= {PUBLIC_A, PUBLIC_B}
