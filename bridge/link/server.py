"""The thin asyncio WebSocket server around ``LinkProtocol``.

It moves frames between plugin connections and the protocol core, runs the handler for each
request, and matches the bridge's own requests with their answers. Hardening lives here: loopback
by default, browser ``Origin`` refused before the upgrade, no compression, a frame cap (1009
above it), ping keep-alive, a handshake deadline (4003), one authenticated connection per
server id at a time (the older one is closed with 4004; connections of different servers live
side by side, each with its own handler), and caps on the connections that have not
authenticated yet (`bridge.link.admission`): a flood of idle sockets closes its own oldest ones
and is logged as one summary line per interval, while the plugin can still get in.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from bridge.errors import LinkError
from bridge.link.admission import Admission, RefusalLog
from bridge.link.codes import CloseCode, ErrorCode
from bridge.link.connection import PluginConnection
from bridge.link.errors import LinkRequestError
from bridge.link.handler import Link, LinkHandler, ServerTable
from bridge.link.messages import (
    Hello,
    WireModel,
)
from bridge.link.protocol import (
    DEFAULT_SERVER_ID,
    LinkProtocol,
    NotOpenError,
    State,
    token_digest,
)

logger = logging.getLogger(__name__)

REVOKED_CHANGED = "the token of this server was changed: link again with the new one"
REVOKED_REMOVED = "this server was removed from servers.yml"

SHUTTING_DOWN = "shutting down: this bridge is stopping; try the next"
"""The close reason of every link when the bridge stops (distinct from a lost database or a lost
lease: the plugin's log says which happened)."""


@dataclass(frozen=True, slots=True)
class Revoked:
    """A link closed because the token it proved is no longer its server's."""

    server_id: str
    peer: str
    code: CloseCode
    reason: str


@dataclass(frozen=True)
class LinkSettings:
    """Where and how the link listens.

    Defaults: ``host`` 127.0.0.1 (loopback only), ``port`` 25580 (0 picks a free one), ``path``
    ``/link``, ``max_frame_bytes`` 65536, ``ping_interval`` and ``ping_timeout`` 20 s,
    ``handshake_timeout`` 5 s (for the HTTP upgrade, and again for the ``hello``),
    ``request_timeout`` 10 s (the bridge's own requests wait this long for the plugin; a handler
    answering the plugin gets as long, then ``UNAVAILABLE``), ``max_requests_in_flight`` 256 (the
    plugin's unanswered requests), ``close_timeout`` 10 s (how long a close waits for the peer's
    acknowledgement before dropping the socket), ``write_timeout`` 10 s (how long one write may
    wait for the plugin to take it in: a plugin that stopped reading fills its socket, and then
    not even a ping gets out for the ping timeout to notice; past it the connection is cut),
    ``max_unauthenticated`` 512 and ``max_unauthenticated_per_address`` 256 (connections held
    before their ``hello``; past a cap an older one is closed), ``refusal_log_interval`` 10 s (one
    summary line per interval about connections closed or refused before authenticating).
    """

    host: str = "127.0.0.1"
    port: int = 25580
    path: str = "/link"
    max_frame_bytes: int = 65536
    ping_interval: float = 20.0
    ping_timeout: float = 20.0
    handshake_timeout: float = 5.0
    request_timeout: float = 10.0
    max_requests_in_flight: int = 256
    close_timeout: float = 10.0
    write_timeout: float = 10.0
    max_unauthenticated: int = 512
    max_unauthenticated_per_address: int = 256
    refusal_log_interval: float = 10.0
    tls: ssl.SSLContext | None = None
    """Serve ``wss://`` with this server context (certificate and key loaded); None: ``ws://``."""


class LinkServerError(LinkError):
    """The server could not start (address in use, bad host)."""


class _OneServer:
    """The server table of a bridge with one server: ``link.token`` and one handler."""

    def __init__(self, token: str, handler: LinkHandler) -> None:
        self._token = token
        self._handler = handler

    def token(self, server_id: str) -> str | None:
        return self._token if server_id == DEFAULT_SERVER_ID else None

    def handler(self, server_id: str) -> LinkHandler:
        return self._handler

    def serves(self, server_id: str) -> bool:
        return True


class ServerLink:
    """The ``Link`` of one server id: requests and events to the plugin of that server linked
    now, ``DISCONNECTED`` while none is."""

    def __init__(self, server: LinkServer, server_id: str) -> None:
        self._server = server
        self.server_id = server_id

    @property
    def connected(self) -> bool:
        return self._server.connected_to(self.server_id)

    async def request(
        self, name: str, data: WireModel, *, timeout: float | None = None
    ) -> WireModel:
        return await self._server.request(name, data, timeout=timeout, server_id=self.server_id)

    async def send_event(self, name: str, data: WireModel) -> None:
        await self._server.send_event(name, data, server_id=self.server_id)


class LinkServer:
    """The bridge's end of the link: listens, authenticates, and serves one plugin per server.

    Use ``async with LinkServer(token=..., handler=...) as server:`` for one server (the
    default one), or ``LinkServer(servers=table)`` for several (``ServerTable``: a token and a
    handler per server id). ``server.url`` is the address to give the plugin. ``request`` and
    ``send_event`` reach the plugin of ``server_id`` (the default server unless named);
    ``link_for`` gives the same as a ``Link``.
    """

    def __init__(
        self,
        *,
        token: str | None = None,
        handler: LinkHandler | None = None,
        servers: ServerTable | None = None,
        settings: LinkSettings | None = None,
    ) -> None:
        if servers is None:
            if token is None or handler is None:
                raise LinkError("LinkServer needs token and handler, or servers")
            servers = _OneServer(token, handler)
        elif token is not None or handler is not None:
            raise LinkError("LinkServer takes token and handler, or servers, not both")
        self._servers = servers
        self.settings = settings or LinkSettings()
        self._server: Server | None = None
        self._current: dict[str, PluginConnection] = {}
        # Per server id: one server's slow connect or disconnect never holds up another's.
        self._connect_locks: dict[str, asyncio.Lock] = {}
        self._connections: set[PluginConnection] = set()
        settings = self.settings
        self._admission: Admission[ServerConnection] = Admission(
            max_total=settings.max_unauthenticated,
            max_per_address=settings.max_unauthenticated_per_address,
        )
        self._refusals = RefusalLog(logger, interval=settings.refusal_log_interval)
        self._summaries: asyncio.Task[None] | None = None
        self.on_revoked: Callable[[Revoked], None] | None = None
        """Told of every link closed because its token was revoked (the audit record)."""

    # ---- lifecycle

    async def start(self) -> None:
        settings = self.settings
        try:
            self._server = await serve(
                self._serve,
                settings.host,
                settings.port,
                process_request=self._check_request,
                compression=None,
                max_size=settings.max_frame_bytes,
                ping_interval=settings.ping_interval,
                ping_timeout=settings.ping_timeout,
                open_timeout=settings.handshake_timeout,
                close_timeout=settings.close_timeout,
                server_header=None,
                ssl=settings.tls,
                create_connection=_guarded_connection(self._admit, self._admission.release),
                logger=_QuietHandshakes(logging.getLogger("websockets.server"), self),
            )
        except OSError as exc:
            where = f"{settings.host}:{settings.port}"
            raise LinkServerError(f"cannot listen on {where}: {exc.strerror or exc}") from exc
        self._summaries = asyncio.create_task(self._summarise_refusals())

    async def close(self) -> None:
        """Close every connection with 1000 (also those still in the handshake), stop listening."""
        if self._server is None:
            return
        if self._summaries is not None:
            self._summaries.cancel()
            self._summaries = None
        self._server.close(close_connections=False)  # stop accepting; we close ours with 1000
        for connection in self._connections:
            connection.core.close(CloseCode.NORMAL, SHUTTING_DOWN)
            connection.dispatch(connection.core.events_received())
        await asyncio.gather(*(connection.flush() for connection in self._connections))
        self._server.close()
        await self._server.wait_closed()
        self._server = None

    async def __aenter__(self) -> LinkServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def port(self) -> int:
        if self._server is None:
            raise LinkServerError("the server is not listening")
        port: int = next(iter(self._server.sockets)).getsockname()[1]
        return port

    @property
    def url(self) -> str:
        host = self.settings.host
        shown = f"[{host}]" if ":" in host else host
        scheme = "ws" if self.settings.tls is None else "wss"
        return f"{scheme}://{shown}:{self.port}{self.settings.path}"

    # ---- the Link interface for the application

    @property
    def connected(self) -> bool:
        """Whether the default server's plugin is linked (``connected_to`` for the others)."""
        return self.connected_to(DEFAULT_SERVER_ID)

    def connected_to(self, server_id: str) -> bool:
        return server_id in self._current

    @property
    def linked_servers(self) -> frozenset[str]:
        """The ids of the servers whose plugin is linked now."""
        return frozenset(self._current)

    def link_for(self, server_id: str) -> Link:
        return ServerLink(self, server_id)

    async def drop(self, server_id: str, code: CloseCode, reason: str) -> bool:
        """Close the link of ``server_id`` (when this bridge stops serving it); whether one was
        linked."""
        connection = self._current.get(server_id)
        if connection is None:
            return False
        connection.core.close(code, reason)
        connection.dispatch(connection.core.events_received())
        connection.spawn(connection.flush())
        return True

    def revoke_stale(self) -> list[Revoked]:
        """Close every link whose server's token in force is no longer the one it proved (a
        reload changed the server's token in ``.env`` or removed it from ``servers.yml``); what
        was closed. The default server's token is ``link.token``'s, watched on its own
        (`bridge.link.token_rotation`), so it is not looked at here."""
        closed = []
        for server_id, connection in list(self._current.items()):
            if server_id == DEFAULT_SERVER_ID:
                continue
            revoked = self._revoked(server_id, connection)
            if revoked is not None:
                closed.append(revoked)
        return closed

    def _revoked(self, server_id: str, connection: PluginConnection) -> Revoked | None:
        """Close ``connection`` when its token is revoked (once: a closing link is left)."""
        if server_id == DEFAULT_SERVER_ID or connection.core.state is not State.OPEN:
            return None
        token = self._servers.token(server_id)
        if token is not None and token_digest(token) == connection.core.proven:
            return None
        reason = REVOKED_REMOVED if token is None else REVOKED_CHANGED
        revoked = Revoked(server_id, connection.peer, CloseCode.AUTH_FAILED, reason)
        logger.warning(
            "link of server %s from %s closed (%d): %s",
            *(server_id, connection.peer, revoked.code, reason),
        )
        connection.core.close(revoked.code, reason)
        connection.dispatch(connection.core.events_received())
        connection.spawn(connection.flush())
        if self.on_revoked is not None:
            try:
                self.on_revoked(revoked)
            except Exception:  # the audit must not keep a revoked link open
                logger.exception("revoked link of server %s not recorded", server_id)
        return revoked

    @property
    def unauthenticated(self) -> int:
        """Connections held now that have not proven the token yet (at most the caps)."""
        return len(self._admission)

    async def request(
        self,
        name: str,
        data: WireModel,
        *,
        timeout: float | None = None,
        server_id: str = DEFAULT_SERVER_ID,
    ) -> WireModel:
        connection = self._connection_served(server_id)
        try:
            request_id = connection.core.send_request(name, data)
        except NotOpenError as exc:
            raise LinkRequestError(ErrorCode.DISCONNECTED, "the link is closing") from exc
        future: asyncio.Future[WireModel] = asyncio.get_running_loop().create_future()
        connection.pending[request_id] = future
        await connection.flush()
        limit = self.settings.request_timeout if timeout is None else timeout
        # asyncio.timeout, not wait_for: on 3.11 wait_for drops a cancellation that lands in
        # the same loop step as the answer, and the cancelled caller would carry on.
        try:
            async with asyncio.timeout(limit):
                return await future
        except TimeoutError:
            self._forget(connection, request_id)
            raise LinkRequestError(ErrorCode.TIMEOUT, f"no answer to {name} in {limit} s") from None
        except asyncio.CancelledError:
            self._forget(connection, request_id)
            raise

    def _connection_served(self, server_id: str) -> PluginConnection:
        """The link of ``server_id``, if this bridge still serves it: a bridge resumed after a
        pause may have lost the server's lease meanwhile, and must not act for it any more
        (dispatch a command, show a line) before its link is dropped."""
        connection = self._current.get(server_id)
        if connection is None:
            raise LinkRequestError(ErrorCode.DISCONNECTED, "the plugin is not connected")
        if self._revoked(server_id, connection) is not None:
            raise LinkRequestError(ErrorCode.DISCONNECTED, "this server's token was revoked")
        if not self._servers.serves(server_id):
            raise LinkRequestError(
                ErrorCode.DISCONNECTED, "this bridge no longer holds this server's lease"
            )
        return connection

    @staticmethod
    def _forget(connection: PluginConnection, request_id: str) -> None:
        connection.core.forget_request(request_id)
        connection.pending.pop(request_id, None)

    async def send_event(
        self, name: str, data: WireModel, *, server_id: str = DEFAULT_SERVER_ID
    ) -> None:
        connection = self._connection_served(server_id)
        try:
            connection.core.send_event(name, data)
        except NotOpenError as exc:
            raise LinkRequestError(ErrorCode.DISCONNECTED, "the link is closing") from exc
        await connection.flush()

    # ---- connections

    def _admit(self, ws: ServerConnection) -> None:
        peer = ws.transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        for victim in self._admission.admit(ws, address):
            # A reset, not a close handshake: the slot and the descriptor are free at once.
            self._refusals.note("closed past the caps")
            victim.evicted = True  # type: ignore[attr-defined]
            victim.transport.abort()

    def note_refusal(self, reason: str) -> None:
        """Count a refusal for the interval's summary line (used by the websockets logger)."""
        self._refusals.note(reason)

    async def _summarise_refusals(self) -> None:
        while True:
            await asyncio.sleep(self._refusals.interval)
            self._refusals.summarise()

    def _check_request(self, ws: ServerConnection, request: Request) -> Response | None:
        self._admission.upgraded(ws)
        if "Origin" in request.headers:
            # Browsers always send Origin; the plugin never does. Refusing it keeps web pages
            # on this machine from talking to the link.
            self._refusals.note(
                "browser origins refused",
                "link upgrade with Origin %r refused",
                request.headers["Origin"],
            )
            return ws.respond(HTTPStatus.FORBIDDEN, "browser origins are refused\n")
        if request.path != self.settings.path:
            self._refusals.note("upgrades to another path refused")
            return ws.respond(HTTPStatus.NOT_FOUND, f"the link is at {self.settings.path}\n")
        return None

    async def _serve(self, ws: ServerConnection) -> None:
        servers = self._servers
        core = LinkProtocol(
            token=servers.token,
            link_state=lambda server_id: servers.handler(server_id).link_state(),
            serves=servers.serves,
            max_frame_bytes=self.settings.max_frame_bytes,
            max_requests_in_flight=self.settings.max_requests_in_flight,
        )
        connection = PluginConnection(
            ws,
            core,
            answer_timeout=self.settings.request_timeout,
            refusals=self._refusals,
            write_timeout=self.settings.write_timeout,
        )
        self._connections.add(connection)
        try:
            if await self._handshake(connection):
                await self._run(connection)
        finally:
            self._connections.discard(connection)
            await self._drop(connection)

    async def _handshake(self, connection: PluginConnection) -> bool:
        core = connection.core
        await connection.flush()
        try:
            async with asyncio.timeout(self.settings.handshake_timeout):
                while core.state is State.AWAITING_HELLO:
                    core.receive(await connection.ws.recv())
                    if core.hello is not None:  # set with State.OPEN, only on success
                        # At once, before any await: a flood must not evict it from here on.
                        self._admission.release(connection.ws)
                    connection.dispatch(core.events_received())
                    await connection.flush()
        except TimeoutError:
            self._refusals.note(
                "handshakes timed out", "link handshake from %s timed out", connection.peer
            )
            core.close(CloseCode.HANDSHAKE_FAILED, "handshake timeout")
            await connection.flush()
            return False
        except ConnectionClosed:
            return False
        return core.state is State.OPEN

    async def _run(self, connection: PluginConnection) -> None:
        server_id = connection.core.server_id
        assert server_id is not None  # set with the handshake
        handler = self._servers.handler(server_id)
        connection.handler = handler
        async with self._connect_locks.setdefault(server_id, asyncio.Lock()):
            previous = self._current.get(server_id)
            self._current[server_id] = connection
            if previous is not None:
                logger.info(
                    "link of server %s from %s replaced by %s",
                    *(server_id, previous.peer, connection.peer),
                )
                previous.core.close(CloseCode.REPLACED, "replaced by a newer connection")
                previous.dispatch(previous.core.events_received())
                # Not awaited: an unresponsive old peer (the usual reason for a new connection)
                # must not hold the new one up for the whole close timeout.
                previous.spawn(previous.flush())
                await handler.on_disconnected()
            hello = connection.core.hello
            assert isinstance(hello, Hello)
            connection.link = self.link_for(server_id)
            await handler.on_connected(connection.link, hello)
        connection.spawn(connection.run_plugin_events(handler))
        core = connection.core
        try:
            async for raw in connection.ws:
                # Every frame is judged by the token in force: a link whose token a reload
                # revoked gets nothing served, even before the sweep after the reload.
                if self._revoked(server_id, connection) is not None:
                    await connection.flush()
                    break
                core.receive(raw)
                connection.dispatch(core.events_received())
                if core.has_data_to_send:
                    await connection.flush()
        except ConnectionClosed:
            pass

    async def _drop(self, connection: PluginConnection) -> None:
        connection.core.connection_lost()
        connection.dispatch(connection.core.events_received())
        for task in list(connection.tasks):
            task.cancel()
        if connection.tasks:
            await asyncio.wait(connection.tasks)
        server_id, handler = connection.core.server_id, connection.handler
        if server_id is not None and handler is not None:
            async with self._connect_locks.setdefault(server_id, asyncio.Lock()):
                if self._current.get(server_id) is connection:
                    del self._current[server_id]
                    await handler.on_disconnected()
        if connection.authenticated:  # the others are counted, not logged one by one
            code, reason = connection.ws.close_code, connection.ws.close_reason
            logger.info(
                "link of server %s from %s closed (%s %s)",
                *(server_id, connection.peer, code, reason or ""),
            )


def _guarded_connection(
    admit: Callable[[ServerConnection], None], release: Callable[[ServerConnection], None]
) -> type[ServerConnection]:
    """A websockets connection class that reports itself to the admission from TCP accept on."""

    class GuardedConnection(ServerConnection):
        evicted = False

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            admit(self)

        def connection_lost(self, exc: Exception | None) -> None:
            release(self)
            super().connection_lost(exc)

    return GuardedConnection


class _QuietHandshakes(logging.LoggerAdapter):  # type: ignore[type-arg]
    """The websockets logger, minus one line per failed opening handshake.

    websockets logs every opening handshake that fails (garbage instead of an HTTP request, a
    peer gone mid-request) as an error with a traceback, and every upgrade as "connection
    open": kilobytes per connection under a flood. Those peers have not authenticated, so the
    failures are counted into the summary line instead, and the opens are left to the link's
    own line for the plugin that authenticates.
    """

    def __init__(self, logger: logging.Logger, server: LinkServer) -> None:
        super().__init__(logger, {})
        self._server = server

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        if msg == "connection open":
            return  # said once per plugin by the link's own "linked from" line
        if msg == "opening handshake failed":
            connection = kwargs.get("extra", {}).get("websocket")
            if not getattr(connection, "evicted", False):  # those were counted already
                self._server.note_refusal("opening handshakes failed")
            return
        super().log(level, msg, *args, **kwargs)
