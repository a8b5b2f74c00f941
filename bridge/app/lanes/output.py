"""The turn engine's output over the link.

Action-bar frames go to the asking player as events (the engine already throttles them to
about one per 75 ms and caps them at ``chat.action_bar_max_chars``); the final reply is
broadcast line by line, the first in ``reply.first_line`` (it names the asker), the others in
``reply.layout``; the thinking and tool-status frames are ``message.yml`` action-bar lines;
failures are private lines.
Model text only ever travels in a Text's ``model`` map, and only as MiniMessage the bridge wrote
with the model's text escaped (`bridge.turns.reply_layout`, `bridge.turns.model_text`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Protocol

from bridge.app.lanes import asks
from bridge.errors import LinkError
from bridge.link.handler import Link
from bridge.link.messages import OutputActionbar, OutputChat, Text
from bridge.turns.model_text import one_line
from bridge.turns.ports import PlayerRef

log = logging.getLogger(__name__)


class OutputHost(Protocol):
    """What the output needs of the runtime: the current link and ``message.yml`` lines."""

    link: Link | None

    def text(self, key: str, values: Mapping[str, str] | None = None, **model: str) -> Text: ...


class LinkDownError(LinkError):
    """Output was due while the plugin was not connected."""


class LinkTurnOutput:
    """The reply and failure lines are sent without waiting for the plugin's answer: the turn
    (and with it the busy gate) ends as soon as the frame is on its way, so a player who writes
    right after reading the reply is not told the assistant is busy."""

    def __init__(self, host: OutputHost) -> None:
        self._host = host
        self._sending: set[asyncio.Task[None]] = set()

    def _link(self) -> Link:
        link = self._host.link
        if link is None or not link.connected:
            raise LinkDownError("the plugin is not connected")
        return link

    async def action_bar(self, player: PlayerRef, text: str) -> None:
        # A plain value, not model text: the line is already neutralised and stripped of tags,
        # and the plugin shows a value as it is, without a MiniMessage parse on every frame.
        shown = {"text": one_line(text)}
        frame = OutputActionbar(player=player.uuid, text=self._host.text("reply.action_bar", shown))
        await self._link().send_event("output.actionbar", frame)

    async def action_bar_line(
        self, player: PlayerRef, message_key: str, values: dict[str, str]
    ) -> None:
        line = self._host.text(message_key, {"player": player.name, **values})
        await self._link().send_event(
            "output.actionbar", OutputActionbar(player=player.uuid, text=line)
        )

    async def reply(self, player: PlayerRef, lines: Sequence[str]) -> None:
        # The first line names the asker, so a public reply says whom it answers.
        asker = {"player": player.name}
        frames = [
            OutputChat(
                target="broadcast",
                text=self._host.text(
                    "reply.first_line" if index == 0 else "reply.layout", asker, message=line
                ),
            )
            for index, line in enumerate(lines)
        ]
        self.send_soon(*asks.tag(tuple(frames)))

    async def reply_to_asker(self, player: PlayerRef, lines: Sequence[str]) -> None:
        # A public turn that took a personal result: the answer is the asker's alone.
        frames = [
            OutputChat(
                target="player",
                player=player.uuid,
                text=self._host.text("reply.private_layout", {"player": player.name}, message=line),
            )
            for line in lines
        ]
        self.send_soon(*asks.tag(tuple(frames)))

    async def failure(self, player: PlayerRef, message_key: str, values: dict[str, str]) -> None:
        line = self._host.text(message_key, {"player": player.name, **values})
        self.send_soon(*asks.tag((OutputChat(target="player", player=player.uuid, text=line),)))

    def send_soon(self, *chats: OutputChat) -> None:
        """Send ``chats`` in order without waiting for the plugin's answers; raises
        ``LinkDownError`` at once when the link is down. A line the plugin did not take marks
        the running turn's question ``lost`` (its end then waits for a resend)."""
        ask = asks.TURN_ASK.get()
        try:
            link = self._link()  # a link already down fails the call itself
        except LinkError:
            if ask is not None:
                ask.lost = True
            raise

        # One task sends the lines one after another, so they reach chat in order.
        async def send() -> None:
            try:
                for chat in chats:
                    await link.request("output.chat", chat)
            except LinkError as exc:
                log.warning("turn output not delivered: %s", exc)
                if ask is not None:
                    ask.lost = True

        task = asyncio.create_task(send())
        if ask is not None:
            ask.sending.append(task)  # its ask.done goes after its lines
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def tell(self, player_uuid: str, line: Text) -> None:
        """A private line to one player."""
        chat = OutputChat(target="player", player=player_uuid, text=line)
        await self._link().request("output.chat", chat)

    async def broadcast(self, line: Text) -> None:
        await self._link().request("output.chat", OutputChat(target="broadcast", text=line))
