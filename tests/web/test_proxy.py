"""A proxy only when configured: the environment's HTTP_PROXY is never used, and with
``web.proxy`` the targets are still checked by the bridge before anything reaches the proxy.

The loopback site plays the forward proxy for http: a proxied request arrives with the absolute
URL as its target, a direct one with the path only, so the site tells which way a request came.
"""

from __future__ import annotations

import pytest

from bridge.web.errors import ShieldRefused
from bridge.web.fetch import FetchSettings, WebFetcher
from tests.web.network import PUBLIC_A, ScriptedNetwork, wiki
from tests.web.site import LoopbackSite

PAGE = "<html><head><title>T</title></head><body><p>proxied page text</p></body></html>"


async def test_the_environment_proxy_is_never_used(monkeypatch: pytest.MonkeyPatch) -> None:
    async with LoopbackSite() as proxy, LoopbackSite() as site:
        for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "ALL_PROXY"):
            monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
        site.page("/p", PAGE, "text/plain")
        network = wiki(site.port)
        fetcher = WebFetcher(FetchSettings(), resolver=network.resolve, dialer=network.dial)
        page = await fetcher.fetch("http://wiki.example/p")
    assert "proxied page text" in page.text
    assert proxy.seen == [] and [s.path for s in site.seen] == ["/p"]


async def test_a_configured_proxy_is_used_and_targets_are_checked_first() -> None:
    async with LoopbackSite() as proxy:
        proxy.page("http://wiki.example/p", PAGE, "text/plain")
        proxy.redirect("http://wiki.example/go", "http://internal.example/admin")
        network = ScriptedNetwork()
        network.name("wiki.example", [PUBLIC_A])
        network.name("internal.example", ["192.168.0.10"])
        network.name("proxy.lan", ["10.1.2.3"])  # the owner's proxy, on a private address
        network.route("10.1.2.3", proxy.port, port=3128)
        settings = FetchSettings(proxy="http://proxy.lan:3128")
        fetcher = WebFetcher(settings, resolver=network.resolve, dialer=network.dial)
        page = await fetcher.fetch("http://wiki.example/p")
        assert "proxied page text" in page.text
        assert [(s.path, s.host) for s in proxy.seen] == [("http://wiki.example/p", "wiki.example")]
        # A name resolving to a private address is refused before the proxy hears of it,
        # as a first URL and as a redirect.
        with pytest.raises(ShieldRefused) as first:
            await fetcher.fetch("http://internal.example/admin")
        with pytest.raises(ShieldRefused) as hop:
            await fetcher.fetch("http://wiki.example/go")
        with pytest.raises(ShieldRefused) as literal:
            await fetcher.fetch("http://169.254.169.254/")
    assert first.value.rule == hop.value.rule == "private"
    assert literal.value.rule == "link-local"
    assert [s.path for s in proxy.seen] == ["http://wiki.example/p", "http://wiki.example/go"]
    assert {address for address, _ in network.dials} == {"10.1.2.3"}  # only the proxy
