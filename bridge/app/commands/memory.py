"""``/mineclaw memory``: players see and delete what the assistant keeps about them.

- ``memory`` (or ``memory list``): your own memories; ``memory server``: the server's.
- ``memory forget <id>``: delete one of yours; ``memory forget all``: delete all of yours.
- With ``mineclaw.memory.others`` (operators; the console holds every node): ``memory list
  <player>``, ``memory forget all <player>``, and ``forget <id>`` of anyone's memory or a
  server memory. Another player is found by the name they last wrote a memory under.

Deleting is real: the row and its words in the index go in one transaction.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from typing import Protocol

from bridge.link.messages import CommandRequest, Text
from bridge.memory.records import OTHERS_MEMORY_NODE, Memory
from bridge.memory.store import MemoryStore

USAGE = "memory [list [player]|server|forget <id>|forget all [player]]"
MAX_LISTED = 40


class TextFor(Protocol):
    """``Runtime.text``: a ``message.yml`` line; ``model`` values are model-written text."""

    def __call__(self, key: str, values: Mapping[str, str] | None = None, **model: str) -> Text: ...


async def memory_command(
    store: MemoryStore, request: CommandRequest, args: Sequence[str], text: TextFor
) -> list[Text] | None:
    """The reply lines, or None when ``args`` are not a form of the command (usage)."""
    sender = request.sender
    own_uuid = sender.player.uuid if sender.player is not None else None
    own_name = sender.player.name if sender.player is not None else "console"
    others = OTHERS_MEMORY_NODE in sender.granted or sender.kind == "console"
    words = [arg.lower() for arg in args]
    if not words or words == ["list"]:
        if own_uuid is None:
            return None
        return _listing(await asyncio.to_thread(store.personal, own_uuid), own_name, text)
    if words == ["server"]:
        return _listing(await asyncio.to_thread(store.server), "the server", text)
    if len(words) == 2 and words[0] == "list":
        if not others:
            return [_refused(text, own_name)]
        uuid = await asyncio.to_thread(store.owner_named, args[1])
        found = [] if uuid is None else await asyncio.to_thread(store.personal, uuid)
        return _listing(found, args[1], text)
    if words[:1] == ["forget"] and len(words) in (2, 3):
        return await _forget(store, args[1], args[2:], own_uuid, own_name, others, text)
    return None


async def _forget(
    store: MemoryStore,
    what: str,
    rest: Sequence[str],
    own_uuid: str | None,
    own_name: str,
    others: bool,
    text: TextFor,
) -> list[Text] | None:
    values = {"player": own_name}
    if what.lower() == "all":
        if rest:
            if not others:
                return [_refused(text, own_name)]
            uuid = await asyncio.to_thread(store.owner_named, rest[0])
        else:
            uuid = own_uuid
        if uuid is None:
            return [text("memory.forgotten", {**values, "count": "0"})]
        count = await asyncio.to_thread(store.forget_all, uuid)
        return [text("memory.forgotten", {**values, "count": str(count)})]
    if rest:
        return None
    owner = None if others else own_uuid
    if owner is None and not others:
        return None
    gone = await asyncio.to_thread(store.forget, what, owner_uuid=owner)
    if gone is None:
        return [text("memory.not_found", {**values, "id": what})]
    return [text("memory.forgotten", {**values, "count": "1"})]


def _listing(memories: Collection[Memory], who: str, text: TextFor) -> list[Text]:
    if not memories:
        return [text("memory.empty", {"who": who})]
    shown = list(memories)[-MAX_LISTED:]
    return [text("memory.entry", {"id": m.memory_id, "scope": m.scope}, text=m.text) for m in shown]


def _refused(text: TextFor, name: str) -> Text:
    return text("commands.no_permission", {"player": name, "command": "memory (another player)"})
