"""A real HTTP/1.1 server on loopback for the web tests: routes a test writes, requests it saw.

Each route answers with a status, headers and a body; a body may be endless (``forever``) to
prove the byte cap stops reading. The server records every request's path and Host header, so
a test can tell which name a connection carried.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field


@dataclass
class Route:
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html"})
    body: bytes = b""
    forever: bool = False
    drip_s: float | None = None
    """Send the head, then one byte of the body every ``drip_s`` seconds, without end."""


@dataclass
class Seen:
    path: str
    host: str
    headers: dict[str, str] = field(default_factory=dict)


class LoopbackSite:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.seen: list[Seen] = []
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self.port = 0

    async def __aenter__(self) -> LoopbackSite:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._handlers):  # a dripping answer never ends by itself
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._server.wait_closed()

    def page(self, path: str, html: str | bytes, content_type: str = "text/html") -> None:
        body = html.encode() if isinstance(html, str) else html
        self.routes[path] = Route(body=body, headers={"Content-Type": content_type})

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.routes[path] = Route(status=status, headers={"Location": location})

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                _method, target, _version = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                self.seen.append(Seen(target, headers.get("host", ""), headers))
                route = self.routes.get(target, Route(status=404, body=b"not here"))
                await self._answer(writer, route)
                if route.forever or route.drip_s is not None:
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except asyncio.CancelledError:
            # Only the exit cancels a handler; ending normally keeps asyncio's stream callback
            # (which reads the task's result) from logging the cancellation as an error.
            pass
        finally:
            writer.close()

    async def _answer(self, writer: asyncio.StreamWriter, route: Route) -> None:
        head = [f"HTTP/1.1 {route.status} X"]
        head += [f"{name}: {value}" for name, value in route.headers.items()]
        if route.drip_s is not None:  # a slowloris answer: never a whole body, never silent
            head.append("Content-Length: 1000000")
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
            while True:
                writer.write(b" ")
                await writer.drain()
                await asyncio.sleep(route.drip_s)
        if route.forever:
            head.append("Transfer-Encoding: chunked")
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
            async for chunk in _endless():
                writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                await writer.drain()
            return
        head.append(f"Content-Length: {len(route.body)}")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + route.body)
        await writer.drain()


async def _endless() -> AsyncIterator[bytes]:
    chunk = b"<p>" + b"x" * 16_000 + b"</p>"
    while True:
        yield chunk
