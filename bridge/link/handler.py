"""How the rest of the bridge plugs into the link, and the placeholder that stands in for it.

The turn engine implements ``LinkHandler``; the server calls it for every request and event the
plugin sends and hands it a ``Link`` to make requests of its own. ``PlaceholderHandler`` is the
default until the turn engine lands: it keeps chat flowing and says the assistant is not set up.
"""

from __future__ import annotations

import asyncio
import logging
from contextvars import ContextVar
from typing import Protocol

from bridge.errors import LinkError
from bridge.link.messages import (
    ChatRequest,
    ChatVerdict,
    CommandReply,
    CommandRequest,
    Hello,
    LinkState,
    OutputChat,
    PlayerRef,
    Text,
    WireModel,
)

logger = logging.getLogger(__name__)

NOT_CONFIGURED = "(the assistant is not configured yet)"
COMMAND_UNAVAILABLE = "This command is not available yet: the assistant is not configured."


# The id of the plugin request a handler is answering, set by the server around each ``on_chat``
# and ``on_command`` call (each runs in its own task), so a later ``chat.expired`` naming that id
# can be matched to what the handler did with the message.
CURRENT_REQUEST_ID: ContextVar[str | None] = ContextVar("link_request_id", default=None)


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


class PlaceholderHandler:
    """A stand-in for the turn engine, so the link works end to end before the engine exists.

    Chat starting with ``public_prefix`` is accepted (kept public, no notice) and answered with a
    broadcast saying the assistant is not configured; other chat passes; every ``/mineclaw``
    command gets one line saying it is not available yet.
    """

    def __init__(self, *, public_prefix: str = "@ai") -> None:
        self._prefix = public_prefix
        self._link: Link | None = None
        self._replies: set[asyncio.Task[None]] = set()

    def link_state(self) -> LinkState:
        return LinkState(forward="prefixed", public_prefix=self._prefix)

    async def on_connected(self, link: Link, hello: Hello) -> None:
        self._link = link

    async def on_disconnected(self) -> None:
        self._link = None

    async def on_chat(self, request: ChatRequest) -> ChatVerdict:
        if not request.text.startswith(self._prefix):
            return ChatVerdict(decision="pass", ai_prefix=False, notice=None)
        if self._link is not None:
            # After the verdict, not before: the player's line must be public before the reply.
            task = asyncio.create_task(self._broadcast_not_configured(self._link))
            self._replies.add(task)
            task.add_done_callback(self._replies.discard)
        return ChatVerdict(decision="accept", ai_prefix=False, notice=None)

    async def on_command(self, request: CommandRequest) -> CommandReply:
        return CommandReply(lines=[Text(template=COMMAND_UNAVAILABLE)])

    async def on_player_join(self, player: PlayerRef) -> None:
        pass

    async def on_player_quit(self, player: PlayerRef) -> None:
        pass

    async def on_chat_expired(self, request_id: str) -> None:
        pass

    async def _broadcast_not_configured(self, link: Link) -> None:
        reply = OutputChat(target="broadcast", text=Text(template=NOT_CONFIGURED))
        try:
            await link.request("output.chat", reply)
        except LinkError as exc:
            logger.info("placeholder reply not delivered: %s", exc)
