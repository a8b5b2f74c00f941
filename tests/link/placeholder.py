"""A ``LinkHandler`` for the link's own tests: it keeps chat flowing and says the assistant is
not set up, so the link can be exercised end to end without the application behind it."""

from __future__ import annotations

import asyncio
import logging

from bridge.errors import LinkError
from bridge.link.handler import Link
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
)

logger = logging.getLogger(__name__)

NOT_CONFIGURED = "(the assistant is not configured yet)"
COMMAND_UNAVAILABLE = "This command is not available yet: the assistant is not configured."


class PlaceholderHandler:
    """A stand-in for the application, so the link works end to end without it.

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
