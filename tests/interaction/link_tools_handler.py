"""A link handler for the end-to-end tests of the link tools and Functions: chat as the
placeholder, with `LinkTools` wired the way the application wires it."""

from __future__ import annotations

import asyncio

from bridge.link.handler import Link
from bridge.link.messages import CommandReply, CommandRequest, Hello, PlayerRef
from bridge.policy.approval_commands import ApprovalCommands
from bridge.tools.link_tools import LinkTools
from tests.link.placeholder import PlaceholderHandler


class LinkToolsHandler(PlaceholderHandler):
    def __init__(self, tools: LinkTools) -> None:
        super().__init__()
        self.tools = tools
        self.linked = asyncio.Event()
        self.joined: asyncio.Queue[str] = asyncio.Queue()
        self.quit: asyncio.Queue[str] = asyncio.Queue()

    def wrap(self, link: Link, hello: Hello) -> Link:
        """The link the tools use; a test may record what crosses it."""
        return link

    async def on_connected(self, link: Link, hello: Hello) -> None:
        await super().on_connected(link, hello)
        self.tools.connected(self.wrap(link, hello), hello)
        self.linked.set()

    async def on_disconnected(self) -> None:
        await super().on_disconnected()
        self.tools.disconnected()

    async def on_command(self, request: CommandRequest) -> CommandReply:
        if ApprovalCommands.handles(request):
            return CommandReply(lines=await self.tools.approval_handler(request))
        return await super().on_command(request)

    async def on_player_join(self, player: PlayerRef) -> None:
        self.joined.put_nowait(player.name)

    async def on_player_quit(self, player: PlayerRef) -> None:
        self.tools.player_quit(player)
        self.quit.put_nowait(player.name)
