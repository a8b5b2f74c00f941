"""``/ai new [title]``, ``/ai list``, ``/ai switch <id>``, ``/ai rename <id> <title>``,
``/ai delete <id>``: a player's several private conversations (`bridge.conversations`).

Each needs no more than ``mineclaw.command.private`` (checked by the command map): they touch
only the sender's own conversations. A switch (or a delete of the active conversation) while its
answer runs or a question of it waits is refused: one lane per player answers at a time, and the
next question goes to the conversation just chosen. A line that does not have a command's shape
(``/ai switch to creative?``) is a question like any other (`bridge.app.commands.ai_line`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime

from bridge.app.players.conversation_state import ConversationState
from bridge.app.requests.background import BackgroundTasks
from bridge.app.wiring.runtime import Runtime
from bridge.conversations.shelf import (
    Conversation,
    LimitReached,
    Shelf,
    shown_time,
)
from bridge.errors import StoreError
from bridge.executors import Pool, run_in
from bridge.link.messages import PlayerRef, Text

log = logging.getLogger(__name__)

UNTITLED = "untitled"


CONVERSATION_COMMANDS = frozenset({"new", "list", "switch", "rename", "delete"})
"""The ``/ai`` subcommands this path runs; `bridge.app.commands.ai_line` tells their shapes."""


def title_of(conversation: Conversation) -> str:
    return conversation.title or UNTITLED


class ConversationPath:
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._saving = BackgroundTasks("conversations save")

    @property
    def _state(self) -> ConversationState:
        state = self._runtime.conversations
        assert state is not None  # set by the app handler before any command arrives
        return state

    async def run(self, sender: PlayerRef, words: Sequence[str]) -> list[Text]:
        keyword, rest = words[0].lower(), list(words[1:])
        shelf = self._state.shelf(sender.uuid)
        if keyword == "list":
            return self.listing(sender, shelf)
        if keyword == "new":
            lines = self._new(sender, shelf, " ".join(rest))
        elif keyword == "switch":
            lines = self._switch(sender, shelf, rest[0])
        elif keyword == "rename":
            lines = self._rename(sender, shelf, rest[0], " ".join(rest[1:]))
        else:
            lines = await self._delete(sender, shelf, rest[0])
        await self.save(sender)
        return lines

    async def save(self, sender: PlayerRef) -> None:
        try:
            await run_in(Pool.STORE, self._state.save)
        except StoreError as exc:  # the change holds until the bridge stops
            log.error("conversations of %s not saved: %s", sender.name, exc)

    def save_soon(self, sender: PlayerRef) -> None:
        """Save in the background: a question's new last activity must not hold the player's
        answer line (and the turn's start) behind a file write. Each save writes the whole
        state as it is when it runs, one at a time, so the last to run is the newest."""
        self._saving.start(self.save(sender))

    def listing(self, sender: PlayerRef, shelf: Shelf) -> list[Text]:
        runtime = self._runtime
        player = {"player": sender.name}
        lines = [runtime.text("private.conversation_list", player)]
        for conversation in shelf.newest_first():
            key = (
                "private.conversation_entry_active"
                if conversation.id == shelf.state.active
                else "private.conversation_entry"
            )
            values = {
                **player,
                "id": conversation.id,
                "title": title_of(conversation),
                "last": shown_time(conversation.last_active),
            }
            lines.append(runtime.text(key, values))
        return lines

    def _new(self, sender: PlayerRef, shelf: Shelf, title: str) -> list[Text]:
        runtime = self._runtime
        player = {"player": sender.name}
        if (refused := self._held(sender, shelf)) is not None:
            return refused
        limit = runtime.plane.config.conversations.max_per_player
        try:
            started = shelf.start(self._typed(title) or None, datetime.now(UTC), limit)
        except LimitReached:
            return [runtime.text("private.conversation_limit", {**player, "limit": str(limit)})]
        self._audit("conversation.new", sender, started)
        values = {**player, "id": started.id, "title": title_of(started)}
        return [runtime.text("private.conversation_new", values)]

    def _switch(self, sender: PlayerRef, shelf: Shelf, conversation_id: str) -> list[Text]:
        runtime = self._runtime
        player = {"player": sender.name}
        if shelf.find(conversation_id) is None:
            return [runtime.text("private.conversation_unknown", {**player, "id": conversation_id})]
        if conversation_id != shelf.state.active and (refused := self._held(sender, shelf)):
            return refused
        chosen = shelf.switch(conversation_id)
        assert chosen is not None
        self._audit("conversation.switch", sender, chosen)
        values = {**player, "id": chosen.id, "title": title_of(chosen)}
        return [runtime.text("private.conversation_switched", values)]

    def _rename(
        self, sender: PlayerRef, shelf: Shelf, conversation_id: str, title: str
    ) -> list[Text]:
        runtime = self._runtime
        player = {"player": sender.name}
        renamed = shelf.rename(conversation_id, self._typed(title))
        if renamed is None:
            return [runtime.text("private.conversation_unknown", {**player, "id": conversation_id})]
        self._audit("conversation.rename", sender, renamed)
        values = {**player, "id": renamed.id, "title": title_of(renamed)}
        return [runtime.text("private.conversation_renamed", values)]

    async def _delete(self, sender: PlayerRef, shelf: Shelf, conversation_id: str) -> list[Text]:
        runtime = self._runtime
        player = {"player": sender.name}
        if shelf.find(conversation_id) is None:
            return [runtime.text("private.conversation_unknown", {**player, "id": conversation_id})]
        if conversation_id == shelf.state.active and (refused := self._held(sender, shelf)):
            return refused
        deleted = shelf.delete(conversation_id, datetime.now(UTC))
        assert deleted is not None
        # Its turns stay in the archive (and the audit log), the owner's record; what the
        # assistant could find of it again (the conversation index) goes with it.
        lane_id = self._state.lane_of(sender.uuid, deleted.id)
        memories = runtime.memories
        if memories is not None:
            try:
                await run_in(Pool.STORE, memories.forget_conversation, sender.uuid, lane_id)
            except StoreError as exc:
                log.error("entries of conversation %s not forgotten: %s", deleted.id, exc)
        self._audit("conversation.delete", sender, deleted)
        values = {
            **player,
            "id": deleted.id,
            "title": title_of(deleted),
            "active": shelf.state.active,
        }
        return [runtime.text("private.conversation_deleted", values)]

    def _typed(self, title: str) -> str:
        """A title as a player typed it, redacted before it is kept or shown (a secret pasted
        into a title would otherwise sit in the conversations file and every listing)."""
        return " ".join(self._runtime.plane.redact(title).split())

    def _held(self, sender: PlayerRef, shelf: Shelf) -> list[Text] | None:
        """A refusal while the active conversation's lane answers or has a question waiting
        (its lane cannot be let go); None when the player may leave it."""
        lanes = self._runtime.lanes
        lane = lanes.lanes.find_private(sender.uuid)
        if lane is None or lanes.lanes.forget_private(sender.uuid):
            return None
        values = {"player": sender.name, "id": shelf.state.active}
        return [self._runtime.text("private.conversation_busy", values)]

    def _audit(self, event: str, sender: PlayerRef, conversation: Conversation) -> None:
        self._runtime.audit.record(
            event,
            {
                "player": sender.name,
                "conversation": conversation.id,
                "lane": self._state.lane_of(sender.uuid, conversation.id),
            },
        )
