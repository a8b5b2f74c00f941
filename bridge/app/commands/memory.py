"""``/mineclaw memory``: players see and delete what the assistant keeps about them.

- ``memory`` (or ``memory list``): your own memories; ``memory server``: the server's;
  ``memory conversations``: the entries of your private conversations the assistant can search
  (the conversation index).
- ``memory forget <id>``: delete one of your memories or conversation entries; ``memory forget
  all``: delete all of them (memories and entries).
- ``memory share <id>``, ``memory unshare <id>``: whether one of your memories may be recalled
  into your public questions too (an unshared one never is: a public answer is everyone's).
- With ``mineclaw.memory.others`` (operators; the console holds every node): ``memory list
  <player>``, ``memory forget all <player>``, and ``forget <id>`` of anyone's memory or a
  server memory. The player is named by their UUID, or by the name of a player online now
  (resolved to their UUID by the server); never by the name a memory was once written under.
  Each of these is audited (``memory.others``: who, what, whose UUID, how many).

Deleting is real: the row, its words in the index and its vector go in one transaction.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Protocol

from bridge.errors import LinkError
from bridge.link.handler import Link
from bridge.link.messages import CommandRequest, PlayersList, PlayersListResult, Text
from bridge.memory.records import OTHERS_MEMORY_NODE, Memory
from bridge.memory.store import MemoryStore

USAGE = (
    "memory [list [player]|server|conversations|share <id>|unshare <id>|forget <id>"
    "|forget all [player]]"
)
MAX_LISTED = 40
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


class TextFor(Protocol):
    """``Runtime.text``: a ``message.yml`` line; ``model`` values are model-written text."""

    def __call__(self, key: str, values: Mapping[str, str] | None = None, **model: str) -> Text: ...


Resolve = Callable[[str], Awaitable[str | None]]
"""A player named by an operator (a UUID, or the name of a player online now) to their UUID."""
Audit = Callable[[str, Mapping[str, str | int]], None]


async def memory_command(
    store: MemoryStore,
    request: CommandRequest,
    args: Sequence[str],
    text: TextFor,
    *,
    resolve: Resolve,
    audit: Audit,
) -> list[Text] | None:
    """The reply lines, or None when ``args`` are not a form of the command (usage)."""
    sender = request.sender
    own_uuid = sender.player.uuid if sender.player is not None else None
    own_name = sender.player.name if sender.player is not None else "console"
    others = OTHERS_MEMORY_NODE in sender.granted or sender.kind == "console"
    words = [arg.lower() for arg in args]
    command = _Command(store, text, own_uuid, own_name, others, resolve, audit)
    if not words or words == ["list"]:
        if own_uuid is None:
            return None
        return _listing(await asyncio.to_thread(store.personal, own_uuid), own_name, text)
    if words == ["server"]:
        return _listing(await asyncio.to_thread(store.server), "the server", text)
    if words == ["conversations"]:
        if own_uuid is None:
            return None
        found = await asyncio.to_thread(store.conversations, own_uuid, limit=MAX_LISTED)
        return _listing(list(reversed(found)), own_name, text)
    if len(words) == 2 and words[0] in ("share", "unshare"):
        return await command.share(args[1], shared=words[0] == "share")
    if len(words) == 2 and words[0] == "list":
        return await command.list_of(args[1])
    if words[:1] == ["forget"] and len(words) in (2, 3):
        return await command.forget(args[1], args[2:])
    return None


class _Command:
    def __init__(
        self,
        store: MemoryStore,
        text: TextFor,
        own_uuid: str | None,
        own_name: str,
        others: bool,
        resolve: Resolve,
        audit: Audit,
    ) -> None:
        self.store = store
        self.text = text
        self.own_uuid = own_uuid
        self.own_name = own_name
        self.others = others
        self.resolve = resolve
        self.audit = audit

    def _audited(self, action: str, target: str, count: int) -> None:
        fields = {"actor": self.own_name, "actor_uuid": self.own_uuid or "console"}
        self.audit("memory.others", {**fields, "action": action, "target": target, "count": count})

    async def share(self, memory_id: str, *, shared: bool) -> list[Text] | None:
        if self.own_uuid is None:
            return None
        values = {"player": self.own_name, "id": memory_id}
        done = await asyncio.to_thread(self.store.share, memory_id, self.own_uuid, shared=shared)
        if done is None:
            return [self.text("memory.not_found", values)]
        return [self.text("memory.shared" if shared else "memory.unshared", values)]

    async def list_of(self, player: str) -> list[Text]:
        if not self.others:
            return [_refused(self.text, self.own_name)]
        uuid = await self.resolve(player)
        found = [] if uuid is None else await asyncio.to_thread(self.store.personal, uuid)
        if uuid is not None:
            self._audited("list", uuid, len(found))
        return _listing(found, player, self.text)

    async def forget(self, what: str, rest: Sequence[str]) -> list[Text] | None:
        values = {"player": self.own_name}
        if what.lower() == "all":
            if rest:
                if not self.others:
                    return [_refused(self.text, self.own_name)]
                uuid = await self.resolve(rest[0])
            else:
                uuid = self.own_uuid
            if uuid is None:
                return [self.text("memory.forgotten", {**values, "count": "0"})]
            count = await asyncio.to_thread(self.store.forget_all, uuid)
            if rest:
                self._audited("forget_all", uuid, count)
            return [self.text("memory.forgotten", {**values, "count": str(count)})]
        if rest:
            return None
        if self.own_uuid is None and not self.others:
            return None
        # A player's own first; an operator's reach past theirs is audited.
        gone = None
        if self.own_uuid is not None:
            gone = await asyncio.to_thread(self.store.forget, what, owner_uuid=self.own_uuid)
        if gone is None and self.others:
            gone = await asyncio.to_thread(self.store.forget, what, owner_uuid=None)
            if gone is not None:
                self._audited("forget", gone.owner_uuid or "server", 1)
        if gone is None:
            return [self.text("memory.not_found", {**values, "id": what})]
        # The turns that said a personal memory went with it (`MemoryStore.forget`).
        return [self.text("memory.forgotten", {**values, "count": "1"})]


async def player_uuid(link: Link | None, player: str) -> str | None:
    """``player`` as a UUID: one written as a UUID, or the name of a player online on the
    linked server now; None for anyone else (a name alone is not who a player is: it can be
    renamed or reused)."""
    if UUID.fullmatch(player):
        return player.lower()
    if link is None or not link.connected:
        return None
    try:
        answer = await link.request("players.list", PlayersList())
    except LinkError:
        return None
    if not isinstance(answer, PlayersListResult):
        return None
    for online in answer.players:
        if online.name.lower() == player.lower():
            return online.uuid.lower()
    return None


def _listing(memories: Collection[Memory], who: str, text: TextFor) -> list[Text]:
    if not memories:
        return [text("memory.empty", {"who": who})]
    shown = list(memories)[-MAX_LISTED:]
    return [
        text("memory.entry", {"id": m.memory_id, "scope": _scope(m)}, text=m.text) for m in shown
    ]


def _scope(memory: Memory) -> str:
    return f"{memory.scope}, shared" if memory.shared else memory.scope


def _refused(text: TextFor, name: str) -> Text:
    return text("commands.no_permission", {"player": name, "command": "memory (another player)"})
