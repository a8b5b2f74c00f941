"""The connector: an httpx transport whose every TCP connection goes through the shield.

httpcore opens connections through a network backend, ``connect_tcp(host, port)``, with the
URL's host. ``ShieldedBackend`` answers that call: one lookup by the injected resolver,
``ShieldPolicy.admit`` on every address, then a connection to a checked address by the
injected dialer. httpcore then starts TLS on that stream with the URL's name as SNI and sends
the name in the Host header, so certificates are checked against the name while the socket goes
to the address that was checked. Nothing looks the name up again.

``ShieldedTransport`` is the httpx side: httpx requests in, httpcore's pool (with the backend
above, no proxy, no retries) underneath. httpx's own ``AsyncHTTPTransport`` takes no network
backend, which is why this small adapter exists.

The dialer is the test seam: production connects to the checked address itself; a test's dialer
may carry a connection to a public test address on to a loopback server (``bridge.web.seam``),
after the shield has decided on the public address it was given.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from ipaddress import ip_address

import httpcore
import httpx

from bridge.executors import Pool, run_in
from bridge.tls_trust import verifying_context
from bridge.web.errors import ShieldRefused
from bridge.web.ranges import IPAddress
from bridge.web.shield import Resolver, ShieldPolicy

Dialer = Callable[[IPAddress, int, float | None], Awaitable[httpcore.AsyncNetworkStream]]
"""``(checked address, port, timeout) -> stream``: open a TCP connection to that address."""

ShieldObserver = Callable[[str, int, Sequence[IPAddress]], None]
"""Told ``(host, port, admitted addresses)`` for every connection the shield let through."""


async def system_resolver(host: str, port: int) -> list[str]:
    """The operating system's resolver (getaddrinfo), TCP answers only, in its order."""
    # In a pool of its own: the names are a page's, and a resolver stalled on them must not
    # hold the threads the bridge's own work runs in (``loop.getaddrinfo`` uses the default).
    try:
        infos = await run_in(
            Pool.WEB_LOOKUPS, socket.getaddrinfo, host, port, type=socket.SOCK_STREAM
        )
    except socket.gaierror as exc:
        raise httpcore.ConnectError(f"{host} could not be resolved: {exc.strerror}") from exc
    return [str(info[4][0]) for info in infos]


_ANYIO = httpcore.AnyIOBackend()
_context: ssl.SSLContext | None = None


async def shared_context() -> ssl.SSLContext:
    """The process's verifying TLS context (``bridge.tls_trust``, shared with the provider
    clients), for every connection ``web_fetch`` and ``web_search`` open. Making one loads the
    whole CA bundle (about 25 ms of CPU with the GIL held): the first time it is made in a
    thread, never on the loop, or six pages starting at once held every player's turn for some
    150 ms."""
    global _context
    if _context is None:
        _context = await run_in(Pool.WEB_LOOKUPS, verifying_context)
    return _context


async def direct_dialer(
    address: IPAddress, port: int, timeout: float | None
) -> httpcore.AsyncNetworkStream:
    """Connect to exactly ``address`` (never a name: nothing is resolved here)."""
    return await _ANYIO.connect_tcp(str(address), port, timeout=timeout)


class ShieldedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend with the shield in ``connect_tcp``."""

    def __init__(
        self,
        policy: ShieldPolicy,
        *,
        resolver: Resolver = system_resolver,
        dialer: Dialer = direct_dialer,
        observer: ShieldObserver | None = None,
        proxy: tuple[str, int] | None = None,
    ) -> None:
        """``proxy``: the owner's configured proxy (host, port), the one origin connected to
        without the range table (it is usually on a private address); still one lookup."""
        self._policy = policy
        self._resolver = resolver
        self._dialer = dialer
        self._observer = observer
        self._proxy = proxy

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                if (host, port) == self._proxy:
                    addresses = await self._proxy_addresses(host, port)
                else:
                    addresses = await self._policy.admit(host, port, self._resolver)
                if self._observer is not None:
                    self._observer(host, port, addresses)
                failure: Exception | None = None
                for address in addresses:  # each one checked; the first that answers
                    try:
                        return await self._dialer(address, port, timeout)
                    except (httpcore.ConnectError, OSError) as exc:
                        failure = exc
                raise httpcore.ConnectError(f"could not connect to {host}: {failure}")
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"connecting to {host} timed out") from None

    async def _proxy_addresses(self, host: str, port: int) -> list[IPAddress]:
        found: list[IPAddress] = []
        for text in await self._resolver(host, port) if not _literal(host) else [host]:
            try:
                found.append(ip_address(text))
            except ValueError:
                raise ShieldRefused("host", f"the proxy {host} resolved to {text!r}") from None
        return found

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def _literal(host: str) -> bool:
    try:
        ip_address(host)
    except ValueError:
        return False
    return True


class _Body(httpx.AsyncByteStream):
    def __init__(self, stream: AsyncIterator[bytes] | object) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        assert hasattr(self._stream, "__aiter__")
        try:
            async for chunk in self._stream:
                yield chunk
        except httpcore.TimeoutException as exc:
            raise httpx.ReadTimeout(str(exc)) from exc
        except httpcore.NetworkError as exc:
            raise httpx.ReadError(str(exc)) from exc

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            await close()


class ShieldedTransport(httpx.AsyncBaseTransport):
    """An httpx transport over httpcore's pool with ``ShieldedBackend``: no retry, and a proxy
    only when the owner configured one (``web.proxy``), never from the environment."""

    def __init__(
        self,
        backend: ShieldedBackend,
        *,
        ssl_context: ssl.SSLContext,
        proxy: str | None = None,
    ) -> None:
        """``ssl_context``: ``shared_context()`` unless a test brings its own."""
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=4,
            network_backend=backend,
            retries=0,
            proxy=None if proxy is None else httpcore.Proxy(proxy),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            response = await self._pool.handle_async_request(core_request)
        except ShieldRefused:
            raise
        except httpcore.TimeoutException as exc:
            raise httpx.TimeoutException(str(exc), request=request) from exc
        except httpcore.ConnectError as exc:
            raise httpx.ConnectError(str(exc), request=request) from exc
        except (httpcore.NetworkError, httpcore.ProtocolError) as exc:
            raise httpx.TransportError(str(exc), request=request) from exc
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()
