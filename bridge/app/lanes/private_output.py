"""A private lane's output: the same action-bar frames and failure lines as the public one, but
the answer goes to the asking player alone, each line in the ``reply.private_layout`` template."""

from __future__ import annotations

from collections.abc import Sequence

from bridge.app.lanes.output import LinkTurnOutput
from bridge.turns.ports import PlayerRef


class PrivateLinkOutput(LinkTurnOutput):
    async def reply(self, player: PlayerRef, lines: Sequence[str]) -> None:
        await self.reply_to_asker(player, lines)
