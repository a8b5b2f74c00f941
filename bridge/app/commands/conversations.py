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
USAGES = {
    "switch": "ai switch <id>",
    "rename": "ai rename <id> <title>",
    "delete": "ai delete <id>",
}
"""What the subcommands that need an id say when sent without one (before the list of ids)."""


def title_of(conversation: Conversation) -> str:
    return conversation.title or UNTITLED


Audit = tuple[str, Conversation] | None
"""The audit event a change makes, and its conversation (recorded once, after it is saved)."""


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
        if keyword == "list":
            return self.listing(sender, await self._state.refresh(sender.uuid))
        if keyword in USAGES and not rest:  # the id is missing: how, and which ids there are
            usage = self._runtime.text(
                "commands.usage", {"player": sender.name, "usage": USAGES[keyword]}
            )
            return [usage, *self.listing(sender, await self._state.refresh(sender.uuid))]

        # Made on the shelf as the store has it now; made again if another bridge changed it
        # before this change was saved (so it only changes the shelf and says what it did).
        def make(shelf: Shelf) -> tuple[list[Text], Audit]:
            if keyword == "new":
                return self._new(sender, shelf, " ".join(rest))
            if keyword == "switch":
                return self._switch(sender, shelf, rest[0])
            if keyword == "rename":
                return self._rename(sender, shelf, rest[0], " ".join(rest[1:]))
            return self._delete(sender, shelf, rest[0])

        lines, audit = await self._state.change(sender.uuid, make)
        if audit is not None:
            event, conversation = audit
            if event == "conversation.delete":
                await self._forget(sender, conversation)
            self._audit(event, conversation, sender)
        return lines

    async def _forget(self, sender: PlayerRef, deleted: Conversation) -> None:
        """A deleted conversation's turns stay in the archive (and the audit log), the owner's
        record, but its lane is tombstoned in the store (nothing restores them into a session)
        and what the assistant could find of it again (the conversation index) goes with it."""
        lane_id = self._state.lane_of(sender.uuid, deleted.id)
        memories = self._runtime.memories
        if memories is not None:
            try:
                await run_in(Pool.STORE, memories.forget_conversation, sender.uuid, lane_id)
            except StoreError as exc:
                log.error("entries of conversation %s not forgotten: %s", deleted.id, exc)

    def asked_soon(self, sender: PlayerRef, now: datetime) -> None:
        """Store the active conversation's new last activity in the background: a question
        must not wait for the store (its shelf in this bridge has it already)."""
        self._saving.start(self._state.change(sender.uuid, lambda shelf: shelf.asked(now)))

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

    def _new(self, sender: PlayerRef, shelf: Shelf, title: str) -> tuple[list[Text], Audit]:
        runtime = self._runtime
        player = {"player": sender.name}
        if (refused := self._held(sender, shelf)) is not None:
            return refused, None
        limit = runtime.plane.config.conversations.max_per_player
        try:
            started = shelf.start(self._typed(title) or None, datetime.now(UTC), limit)
        except LimitReached:
            limited = runtime.text("private.conversation_limit", {**player, "limit": str(limit)})
            return [limited], None
        values = {**player, "id": started.id, "title": title_of(started)}
        return [runtime.text("private.conversation_new", values)], ("conversation.new", started)

    def _switch(
        self, sender: PlayerRef, shelf: Shelf, conversation_id: str
    ) -> tuple[list[Text], Audit]:
        runtime = self._runtime
        player = {"player": sender.name}
        if shelf.find(conversation_id) is None:
            unknown = runtime.text(
                "private.conversation_unknown", {**player, "id": conversation_id}
            )
            return [unknown], None
        if conversation_id != shelf.state.active and (refused := self._held(sender, shelf)):
            return refused, None
        chosen = shelf.switch(conversation_id)
        assert chosen is not None
        values = {**player, "id": chosen.id, "title": title_of(chosen)}
        switched = runtime.text("private.conversation_switched", values)
        return [switched], ("conversation.switch", chosen)

    def _rename(
        self, sender: PlayerRef, shelf: Shelf, conversation_id: str, title: str
    ) -> tuple[list[Text], Audit]:
        runtime = self._runtime
        player = {"player": sender.name}
        renamed = shelf.rename(conversation_id, self._typed(title))
        if renamed is None:
            unknown = runtime.text(
                "private.conversation_unknown", {**player, "id": conversation_id}
            )
            return [unknown], None
        values = {**player, "id": renamed.id, "title": title_of(renamed)}
        done = runtime.text("private.conversation_renamed", values)
        return [done], ("conversation.rename", renamed)

    def _delete(
        self, sender: PlayerRef, shelf: Shelf, conversation_id: str
    ) -> tuple[list[Text], Audit]:
        runtime = self._runtime
        player = {"player": sender.name}
        if shelf.find(conversation_id) is None:
            unknown = runtime.text(
                "private.conversation_unknown", {**player, "id": conversation_id}
            )
            return [unknown], None
        if conversation_id == shelf.state.active and (refused := self._held(sender, shelf)):
            return refused, None
        deleted = shelf.delete(conversation_id, datetime.now(UTC))
        assert deleted is not None
        # Its turns stay in the archive (and the audit log), but its lane is tombstoned in the
        # store: nothing restores them into a session again.
        values = {
            **player,
            "id": deleted.id,
            "title": title_of(deleted),
            "active": shelf.state.active,
        }
        done = runtime.text("private.conversation_deleted", values)
        return [done], ("conversation.delete", deleted)

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

    def _audit(self, event: str, conversation: Conversation, sender: PlayerRef) -> None:
        self._runtime.audit.record(
            event,
            {
                "player": sender.name,
                "conversation": conversation.id,
                "lane": self._state.lane_of(sender.uuid, conversation.id),
            },
        )
