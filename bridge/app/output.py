"""The turn engine's output over the link.

Action-bar frames go to the asking player as events (the engine already throttles them to
about one per 75 ms and caps them at ``chat.action_bar_max_chars``); the final reply is
broadcast in the ``reply.layout`` template; failures are private lines. Model text only ever
travels in a Text's ``model`` map, which the plugin renders with its restricted MiniMessage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from bridge.errors import LinkError
from bridge.link.handler import Link
from bridge.link.messages import OutputActionbar, OutputChat, Text
from bridge.turns.ports import PlayerRef


class OutputHost(Protocol):
    """What the output needs of the runtime: the current link and ``message.yml`` lines."""

    link: Link | None

    def text(self, key: str, values: Mapping[str, str] | None = None, **model: str) -> Text: ...


class LinkDownError(LinkError):
    """Output was due while the plugin was not connected."""


class LinkTurnOutput:
    def __init__(self, host: OutputHost) -> None:
        self._host = host

    def _link(self) -> Link:
        link = self._host.link
        if link is None or not link.connected:
            raise LinkDownError("the plugin is not connected")
        return link

    async def action_bar(self, player: PlayerRef, text: str) -> None:
        frame = OutputActionbar(
            player=player.uuid, text=self._host.text("reply.action_bar", text=text)
        )
        await self._link().send_event("output.actionbar", frame)

    async def reply(self, player: PlayerRef, text: str) -> None:
        layout = self._host.text("reply.layout", {"player": player.name}, message=text)
        await self._link().request("output.chat", OutputChat(target="broadcast", text=layout))

    async def failure(self, player: PlayerRef, message_key: str, values: dict[str, str]) -> None:
        line = self._host.text(message_key, {"player": player.name, **values})
        await self.tell(player.uuid, line)

    async def tell(self, player_uuid: str, line: Text) -> None:
        """A private line to one player."""
        chat = OutputChat(target="player", player=player_uuid, text=line)
        await self._link().request("output.chat", chat)

    async def broadcast(self, line: Text) -> None:
        await self._link().request("output.chat", OutputChat(target="broadcast", text=line))
