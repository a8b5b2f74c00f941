"""web_search's backends against a loopback server speaking each API's answer shape."""

from __future__ import annotations

import json

import pytest

from bridge.web.errors import SearchFailed
from bridge.web.search import SearchSettings, WebSearch
from tests.web.site import LoopbackSite

SEARX = {
    "query": "crafting table",
    "results": [
        {
            "title": "Crafting Table",
            "url": "https://wiki.example/Crafting_Table",
            "content": "A <span>crafting</span> table &amp; its grid",
            "engine": "x",
        },
        {"title": "Not a web link", "url": "javascript:alert(1)", "content": "dropped"},
        {"title": "Planks", "url": "https://wiki.example/Planks", "content": "Wood."},
    ],
}
TAVILY = {
    "results": [
        {
            "title": "Furnace",
            "url": "https://wiki.example/Furnace",
            "content": "Smelts ores.",
            "score": 0.9,
        }
    ]
}
BRAVE = {
    "web": {
        "results": [
            {
                "title": "Anvil",
                "url": "https://wiki.example/Anvil",
                "description": "Repairs <strong>tools</strong>.",
            }
        ]
    }
}


async def test_searxng_json_api() -> None:
    async with LoopbackSite() as site:
        site.page("/search?q=crafting+table&format=json", json.dumps(SEARX), "application/json")
        search = WebSearch(SearchSettings("searxng", f"http://127.0.0.1:{site.port}"))
        hits = await search.search("crafting table", 5)
    assert [h.url for h in hits] == [
        "https://wiki.example/Crafting_Table",
        "https://wiki.example/Planks",
    ]
    assert hits[0].snippet == "A crafting table & its grid"


async def test_tavily_sends_the_key_and_reads_results() -> None:
    async with LoopbackSite() as site:
        site.page("/search", json.dumps(TAVILY), "application/json")
        url = f"http://127.0.0.1:{site.port}/search"
        hits = await WebSearch(SearchSettings("tavily", url, api_key="tvly-k")).search("x", 3)
        assert site.seen[0].headers["authorization"] == "Bearer tvly-k"
    assert hits[0].title == "Furnace" and hits[0].snippet == "Smelts ores."


async def test_brave_strips_markup_from_snippets_and_caps_the_count() -> None:
    async with LoopbackSite() as site:
        site.page("/s?q=anvil&count=2", json.dumps(BRAVE), "application/json")
        url = f"http://127.0.0.1:{site.port}/s"
        settings = SearchSettings("brave", url, api_key="k", max_results=2)
        hits = await WebSearch(settings).search("anvil", 50)
        assert site.seen[0].headers["x-subscription-token"] == "k"
    assert hits[0].snippet == "Repairs tools."


@pytest.mark.parametrize(
    ("body", "status", "said"),
    [
        (b"<html>oops</html>", 200, "not search results"),
        (b'{"results": "none"}', 200, "not search results"),
        (b"{}", 500, "answered 500"),
    ],
)
async def test_a_backend_answering_nonsense_is_a_clear_failure(
    body: bytes, status: int, said: str
) -> None:
    async with LoopbackSite() as site:
        site.page("/search?q=x&format=json", body, "application/json")
        site.routes["/search?q=x&format=json"].status = status
        search = WebSearch(SearchSettings("searxng", f"http://127.0.0.1:{site.port}"))
        with pytest.raises(SearchFailed) as failed:
            await search.search("x")
    assert said in str(failed.value)
