"""How the rest of the bridge plugs into the link.

The application (``bridge.app.chat.handler.AppHandler``) implements ``LinkHandler``; the server
calls it for every request and event the plugin sends and hands it a ``Link`` to make requests
of its own.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Protocol

from bridge.link.messages import (
    ChatRequest,
    ChatVerdict,
    CommandReply,
    CommandRequest,
    Hello,
    LinkState,
    PlayerRef,
    WireModel,
)

# The id of the plugin request a handler is answering, set by the server around each ``on_chat``
# and ``on_command`` call (each runs in its own task), so a later ``chat.expired`` naming that id
# can be matched to what the handler did with the message.
CURRENT_REQUEST_ID: ContextVar[str | None] = ContextVar("link_request_id", default=None)

# The link of the server whose plugin made that request, set beside it: a handler the runtime
# let go of meanwhile (its database lost) still ends the request's question on it.
CURRENT_LINK: ContextVar[Link | None] = ContextVar("link_of_request", default=None)


class Link(Protocol):
    """The plugin as the application sees it: requests and events towards it."""

    @property
    def connected(self) -> bool: ...

    async def request(
        self, name: str, data: WireModel, *, timeout: float | None = None
    ) -> WireModel:
        """Send request ``name`` and return its answer's data.

        Raises ``LinkRequestError`` with ``code`` ``TIMEOUT``, ``DISCONNECTED`` or the code of the
        plugin's error frame.
        """
        ...

    async def send_event(self, name: str, data: WireModel) -> None:
        """Send event ``name``; raises ``LinkRequestError`` (``DISCONNECTED``) when down."""
        ...


class LinkHandler(Protocol):
    """What the server calls; one instance serves every connection, one connection at a time.

    ``on_chat`` and ``on_command`` run concurrently, one task per request; what they return is
    the answer. ``on_player_join``/``on_player_quit`` run one at a time, in arrival order. An
    exception from a request handler becomes an ``INTERNAL`` error frame and a log entry.
    """

    def link_state(self) -> LinkState:
        """What the plugin should forward; sent right after each handshake."""
        ...

    async def on_connected(self, link: Link, hello: Hello) -> None: ...

    async def on_disconnected(self) -> None: ...

    async def on_chat(self, request: ChatRequest) -> ChatVerdict: ...

    async def on_command(self, request: CommandRequest) -> CommandReply: ...

    async def on_player_join(self, player: PlayerRef) -> None: ...

    async def on_player_quit(self, player: PlayerRef) -> None: ...

    async def on_chat_expired(self, request_id: str) -> None:
        """The plugin gave up on the verdict of chat request ``request_id``: drop that message."""
        ...


class ServerTable(Protocol):
    """The servers one link serves, by the id each plugin names in its ``hello``.

    ``token`` is read at every handshake (a reload that adds a server takes effect for the
    next connection); ``None`` refuses the id like a wrong MAC. ``handler`` is the server's own
    ``LinkHandler``. ``serves`` is whether this bridge serves the server now (with several
    bridges, only the one holding the server's lease does); a server it does not serve is
    refused with close code 4005, so the plugin tries its next bridge.
    """

    def token(self, server_id: str) -> str | None: ...

    def handler(self, server_id: str) -> LinkHandler: ...

    def serves(self, server_id: str) -> bool: ...
