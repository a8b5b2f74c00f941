"""One plugin connection of the link server: its socket, its protocol core, and what waits on
it. Frames the core decoded become events here: a request runs its handler (bounded by the
answer timeout) and is answered, an answer settles the bridge's own request, a plugin event
waits in order for the server's handler, a refusal is counted. Writes keep the core's order and
a plugin that takes in nothing for the write timeout is cut."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from bridge.errors import LinkError
from bridge.link.admission import RefusalLog
from bridge.link.codes import ErrorCode
from bridge.link.errors import LinkRequestError
from bridge.link.handler import CURRENT_LINK, CURRENT_REQUEST_ID, Link, LinkHandler
from bridge.link.messages import (
    ChatExpired,
    ChatRequest,
    CommandRequest,
    PlayerEvent,
    WireModel,
)
from bridge.link.protocol import (
    AnswerReceived,
    Event,
    EventReceived,
    FaultAnswered,
    FrameTooLargeError,
    HandshakeCompleted,
    HandshakeFailed,
    LinkProtocol,
    NotOpenError,
    PeerErrorReported,
    RequestFailed,
    RequestReceived,
)

# Its lines are the link server's, under the server's logger name (owners filter by it).
logger = logging.getLogger("bridge.link.server")


class PluginConnection:
    """One plugin connection: its socket, its protocol core, and what waits on it."""

    def __init__(
        self,
        ws: ServerConnection,
        core: LinkProtocol,
        *,
        answer_timeout: float,
        refusals: RefusalLog,
        write_timeout: float = 10.0,
    ) -> None:
        self.ws = ws
        self.write_timeout = write_timeout
        self.refusals = refusals
        self.authenticated = False
        self.core = core
        self.link: Link | None = None
        """The server's link (set once the handshake named the server)."""
        self.handler: LinkHandler | None = None
        """The server's handler, set once the handshake named the server."""
        self.answer_timeout = answer_timeout
        self.pending: dict[str, asyncio.Future[WireModel]] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.plugin_events: asyncio.Queue[EventReceived] = asyncio.Queue()
        self._write_lock = asyncio.Lock()
        self.peer = "{}:{}".format(*ws.remote_address[:2]) if ws.remote_address else "?"

    async def flush(self) -> None:
        # The lock keeps frames in the order the core queued them, whichever task flushes.
        async with self._write_lock:
            try:
                async with asyncio.timeout(self.write_timeout):
                    for text in self.core.data_to_send():
                        await self.ws.send(text)
                if self.core.close_code is not None:
                    await self.ws.close(self.core.close_code, self.core.close_reason)
            except TimeoutError:
                self._stalled()
            except ConnectionClosed:
                pass  # the reader sees the close and fails what was in flight

    def _stalled(self) -> None:
        """The plugin stopped taking in what is written (a paused or hung server): its socket
        is full, so not even a ping or a close frame would get out. The connection is cut; the
        reader sees it end and everything in flight fails as for any lost link."""
        logger.warning(
            "link of server %s from %s cut: the plugin took in nothing for %s s (write timeout)",
            *(self.core.server_id, self.peer, self.write_timeout),
        )
        self.ws.transport.abort()

    def spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def dispatch(self, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, RequestReceived):
                self.spawn(self._answer(event))
            elif isinstance(event, EventReceived):
                self.plugin_events.put_nowait(event)
            elif isinstance(event, AnswerReceived):
                self._settle(event.re, event.data, None)
            elif isinstance(event, RequestFailed):
                self._settle(event.re, None, LinkRequestError(event.code, event.message))
            elif isinstance(event, HandshakeFailed):
                self.refusals.note(
                    "hellos refused", "link handshake from %s refused: %s", self.peer, event.reason
                )
            elif isinstance(event, FaultAnswered) and not self.authenticated:
                self.refusals.note(
                    "frames refused before the hello",
                    "link frame from %s refused: %s %s",
                    *(self.peer, event.code, event.message),
                )
            elif isinstance(event, FaultAnswered):
                logger.warning(
                    "link frame from %s refused: %s %s", self.peer, event.code, event.message
                )
            elif isinstance(event, PeerErrorReported):
                logger.warning(
                    "plugin reported %s: %s (re %s)", event.code, event.message, event.re
                )
            elif isinstance(event, HandshakeCompleted):
                self.authenticated = True
                hello = event.hello
                logger.info(
                    "plugin %s %s on %s (server %s, instance %s) linked from %s, session %s",
                    hello.platform,
                    hello.plugin_version,
                    hello.minecraft_version,
                    event.server_id,
                    hello.instance_id,
                    self.peer,
                    event.session_id,
                )

    def _settle(self, request_id: str, data: WireModel | None, error: LinkError | None) -> None:
        future = self.pending.pop(request_id, None)
        if future is None or future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            assert data is not None
            future.set_result(data)

    async def _answer(self, request: RequestReceived) -> None:
        try:
            handler = self.handler
            assert handler is not None  # requests are delivered only after the handshake
            # Bounded, so a stuck handler cannot hold one of the plugin's in-flight slots forever.
            async with asyncio.timeout(self.answer_timeout):
                CURRENT_REQUEST_ID.set(request.id)
                CURRENT_LINK.set(self.link)
                if isinstance(request.data, ChatRequest):
                    answer: WireModel = await handler.on_chat(request.data)
                elif isinstance(request.data, CommandRequest):
                    answer = await handler.on_command(request.data)
                else:  # pragma: no cover - the core delivers only the types above
                    raise LinkError(f"no handler for {request.type}")
            self.core.send_answer(request.id, answer)
        except NotOpenError:
            return
        except TimeoutError:
            logger.warning("handler for %s %s gave no answer in time", request.type, request.id)
            self._send_error(request.id, ErrorCode.UNAVAILABLE, "the bridge gave no answer in time")
        except FrameTooLargeError as exc:
            logger.error("answer to %s %s not sent: %s", request.type, request.id, exc)
            self._send_error(request.id, ErrorCode.INTERNAL, "the bridge could not answer")
        except Exception:
            logger.exception("handler for %s %s failed", request.type, request.id)
            self._send_error(request.id, ErrorCode.INTERNAL, "the bridge could not answer")
        await self.flush()

    def _send_error(self, request_id: str, code: ErrorCode, message: str) -> None:
        try:
            self.core.send_error(request_id, code, message)
        except NotOpenError:
            pass

    async def run_plugin_events(self, handler: LinkHandler) -> None:
        while True:
            event = await self.plugin_events.get()
            data = event.data
            try:
                if isinstance(data, ChatExpired):
                    await handler.on_chat_expired(data.request)
                elif event.type == "player.join":
                    assert isinstance(data, PlayerEvent)
                    await handler.on_player_join(data.player)
                else:
                    assert isinstance(data, PlayerEvent)
                    await handler.on_player_quit(data.player)
            except Exception:
                logger.exception("handler for %s %s failed", event.type, event.id)
