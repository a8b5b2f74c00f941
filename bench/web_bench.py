"""web_fetch's cost: fetch + extraction against plain httpx + the same extractor, and the
shield's cost per connection.

Run: ``python -m bench.web_bench``. A page server on loopback serves the saved pages of
``tests/web/pages``. Each round fetches every page twice, in alternating order: once through
``WebFetcher`` (shield, connector, streamed read, charset, extraction; the name resolves to a
public address through an in-process resolver and the connection is carried to loopback, as in
the tests) and once with a plain ``httpx.AsyncClient`` reading the whole body and handing its
text to the same extractor. Both open a fresh connection per fetch, as ``web_fetch`` does.
Prints p50 and p99 of each and the p50 ratio (goal <= 1.2x), then the shield's own work per
connection (URL check, one lookup answered at once, every address checked; goal < 100 us).
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Sequence
from ipaddress import ip_address
from pathlib import Path

import httpcore
import httpx

from bridge.web.connector import Dialer, direct_dialer
from bridge.web.content import MediaType, decode, text_kind
from bridge.web.extract import extract_html
from bridge.web.fetch import FetchSettings, WebFetcher
from bridge.web.ranges import IPAddress
from bridge.web.shield import ShieldPolicy

PAGES = Path(__file__).resolve().parent.parent / "tests" / "web" / "pages"
PUBLIC = "93.184.216.34"
ROUNDS = 40
SHIELD_CHECKS = 20_000
GOAL_RATIO = 1.2
GOAL_SHIELD_US = 100.0


class PageServer:
    """HTTP/1.1 on loopback: each saved page by its file name, keep-alive."""

    def __init__(self, pages: dict[str, bytes]) -> None:
        self.pages = pages
        self.port = 0
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._handlers):  # handlers of idle keep-alive connections
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ", 2)[1].decode().lstrip("/")
                body = self.pages.get(path, b"")
                status = b"200 OK" if path in self.pages else b"404 Not Found"
                writer.write(
                    b"HTTP/1.1 %s\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s"
                    % (status, len(body), body)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except asyncio.CancelledError:
            # Only stop() cancels a handler; ending normally keeps asyncio's stream callback
            # (which reads the task's result) from logging the cancellation as an error.
            pass
        finally:
            self._handlers.discard(task)
            writer.close()


async def _public(host: str, port: int) -> list[str]:
    return [PUBLIC]


def _to_loopback(site_port: int) -> Dialer:
    async def dial(
        address: IPAddress, port: int, timeout: float | None
    ) -> httpcore.AsyncNetworkStream:
        return await direct_dialer(ip_address("127.0.0.1"), site_port, timeout)

    return dial


async def plain(url: str) -> str:
    async with httpx.AsyncClient(trust_env=False) as client:
        response = await client.get(url)
        media = MediaType.parse(response.headers.get("content-type"))
        text = decode(response.content, media, text_kind(media)).text
        extracted = await asyncio.to_thread(extract_html, text, url)
        return extracted.text


def _p(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


async def fetch_ratio() -> tuple[float, float, float, float]:
    pages = {p.name: p.read_bytes() for p in sorted(PAGES.glob("*.html"))}
    server = PageServer(pages)
    await server.start()
    dialer = _to_loopback(server.port)
    fetcher = WebFetcher(FetchSettings(), resolver=_public, dialer=dialer)
    ours: list[float] = []
    theirs: list[float] = []
    try:
        for name in pages:  # warm both paths (imports, the extractor's first call)
            await fetcher.fetch(f"http://wiki.example/{name}")
            await plain(f"http://127.0.0.1:{server.port}/{name}")
        clock = time.perf_counter
        for index in range(ROUNDS):
            for name in pages:
                order = (0, 1) if index % 2 == 0 else (1, 0)
                for which in order:
                    start = clock()
                    if which == 0:
                        await fetcher.fetch(f"http://wiki.example/{name}")
                        ours.append(clock() - start)
                    else:
                        await plain(f"http://127.0.0.1:{server.port}/{name}")
                        theirs.append(clock() - start)
    finally:
        await server.stop()
    return _p(ours, 0.5), _p(ours, 0.99), _p(theirs, 0.5), _p(theirs, 0.99)


async def shield_cost() -> tuple[float, float]:
    """Per connection: the URL check plus ``admit`` (one lookup answered at once, two
    addresses, both checked against the table)."""
    policy = ShieldPolicy()

    async def resolver(host: str, port: int) -> list[str]:
        return [PUBLIC, "2606:2800:220:1:248:1893:25c8:1946"]

    samples: list[float] = []
    clock = time.perf_counter_ns
    gc.disable()
    try:
        for _ in range(SHIELD_CHECKS):
            start = clock()
            checked = policy.check_url("https://wiki.example/Crafting_Table?section=2")
            await policy.admit(checked.host.name, checked.port, resolver)
            samples.append((clock() - start) / 1000)
    finally:
        gc.enable()
    return _p(samples, 0.5), _p(samples, 0.99)


async def main() -> int:
    ours50, ours99, plain50, plain99 = await fetch_ratio()
    ratio = ours50 / plain50
    print(f"pages: {len(list(PAGES.glob('*.html')))}, rounds: {ROUNDS}")
    print(f"web_fetch          p50 {ours50 * 1000:7.2f} ms  p99 {ours99 * 1000:7.2f} ms")
    print(f"httpx + extractor  p50 {plain50 * 1000:7.2f} ms  p99 {plain99 * 1000:7.2f} ms")
    verdict = "ok" if ratio <= GOAL_RATIO else "over the goal"
    print(f"ratio p50 {ratio:.2f}x (goal <= {GOAL_RATIO}x): {verdict}")
    s50, s99 = await shield_cost()
    verdict = "ok" if s50 < GOAL_SHIELD_US else "over the goal"
    print(f"shield per connection p50 {s50:.1f} us  p99 {s99:.1f} us (goal < 100 us): {verdict}")

    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
