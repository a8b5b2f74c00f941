"""Bodies a server compressed although asked not to: inflated in the extraction worker, bounded
by ``web.max_bytes`` and by a ratio, never on the bridge's event loop."""

from __future__ import annotations

import asyncio
import gzip
import threading
import zlib
from typing import Any

import pytest

from bridge.web.errors import FetchRefused
from bridge.web.extraction_pool import ExtractionPool
from bridge.web.inflate import MAX_RATIO, MIN_ROOM, Uninflatable, inflate
from tests.web.network import wiki
from tests.web.site import LoopbackSite, Route
from tests.web.test_hostile_pages import HANG_GUARD_S, NORMAL, fetcher

BOMB_TEXT = b"boom " * 11_000_000  # plain text: the time goes to inflating, not to trafilatura


def compressed(
    path: str, site: LoopbackSite, body: bytes, encoding: str = "gzip", media: str = "text/html"
) -> None:
    site.routes[path] = Route(
        headers={"Content-Type": media, "Content-Encoding": encoding}, body=body
    )


@pytest.fixture
async def pool() -> Any:
    own = ExtractionPool(workers=1)
    yield own
    own.close()


@pytest.fixture
def inflated_in_this_process(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The witness: every zlib inflater made in the bridge's process, by the thread it ran on
    (the worker is another process, which this does not reach)."""
    seen: list[str] = []
    real = zlib.decompressobj

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(zlib, "decompressobj", spy)
    return seen


async def test_a_compression_bomb_is_inflated_off_the_loop_to_its_ratio_and_said(
    pool: ExtractionPool, inflated_in_this_process: list[str]
) -> None:
    bomb = gzip.compress(BOMB_TEXT, compresslevel=9)
    assert len(BOMB_TEXT) > len(bomb) * MAX_RATIO  # a bomb by the ratio, and 55 MB inflated
    async with LoopbackSite() as site:
        compressed("/bomb", site, bomb, media="text/plain")
        compressed("/furnace", site, gzip.compress(NORMAL.encode()))
        web = fetcher(wiki(site.port), pool, max_bytes=20_000_000)
        async with asyncio.timeout(HANG_GUARD_S):
            page = await web.fetch("http://wiki.example/bomb")
            normal = await web.fetch("http://wiki.example/furnace")
    assert inflated_in_this_process == []  # neither body was inflated in the bridge
    assert page.truncated and page.text.startswith("boom boom")
    assert page.note is not None and f"more than {MAX_RATIO} times its size" in page.note
    assert page.bytes_read == len(bomb)
    assert not normal.truncated and "smelts ores" in normal.text and normal.note is None


async def test_a_body_that_is_not_the_stream_its_header_names_is_refused(
    pool: ExtractionPool,
) -> None:
    async with LoopbackSite() as site:
        compressed("/broken", site, NORMAL.encode())
        compressed("/brotli", site, b"\x1b\x00", encoding="br")
        web = fetcher(wiki(site.port), pool)
        with pytest.raises(FetchRefused) as broken:
            await web.fetch("http://wiki.example/broken")
        with pytest.raises(FetchRefused) as brotli:
            await web.fetch("http://wiki.example/brotli")
    assert broken.value.kind == "not_text" and "could not be inflated" in str(broken.value)
    assert brotli.value.kind == "not_text" and "compressed with br" in str(brotli.value)


def test_inflating_stops_at_the_cap_and_at_the_ratio() -> None:
    repetitive = b"<p>same</p>" * 50_000  # compresses far past the ratio, but is small
    whole = inflate(gzip.compress(repetitive), "gzip", 20_000_000)
    assert whole.body == repetitive and not whole.cut and whole.note is None
    capped = inflate(gzip.compress(repetitive), "gzip", 1000)
    assert capped.body == repetitive[:1000] and capped.cut and capped.note is None
    bomb = zlib.compress(b"\0" * 200_000_000, 9)
    cut = inflate(bomb, "deflate", 20_000_000)
    assert cut.cut and len(cut.body) == max(len(bomb) * MAX_RATIO, MIN_ROOM)
    assert cut.note is not None and "compression bomb" in cut.note
    exact = inflate(gzip.compress(b"x" * 1000), "x-gzip", 1000)
    assert exact.body == b"x" * 1000 and not exact.cut
    with pytest.raises(Uninflatable):
        inflate(b"\x1f\x8c" + gzip.compress(repetitive)[2:], "gzip", 20_000_000)
