"""``/ai history`` and ``/mineclaw history``: a conversation as a written book.

``/ai history`` (``mineclaw.command.private``) shows the sender their own private
conversation; ``/mineclaw history`` (``mineclaw.command.history``, which the bridge asks the
plugin to report; Bukkit gives an undeclared node to operators only) shows the public session.
A player gets a book opened on their screen (``output.book``, for a plugin with the ``books``
feature; no item is given); the console, or a player whose plugin opens no books, gets the
newest entries as plain lines. The entries come from the archive of the lane's current session:
redacted when they were archived, and again here with the configuration in force. The public
book leaves out a public turn that took a personal tool result: its answer reached its asker
alone.
"""

from __future__ import annotations

import asyncio
import logging

from bridge.app.wiring.runtime import Runtime
from bridge.errors import LinkError
from bridge.history.book import book_pages, dump_lines, entries_of
from bridge.link.messages import OutputBook, PlayerRef, Text
from bridge.turns.ports import PlayerRef as TurnPlayer

log = logging.getLogger(__name__)

HISTORY_NODE = "mineclaw.command.history"
BOOKS_FEATURE = "books"
BOOK_TITLE_CHARS = 32


class HistoryPath:
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    async def private(self, sender: PlayerRef) -> list[Text]:
        """The sender's own private conversation."""
        lane = self._runtime.lanes.lanes.private(TurnPlayer(sender.uuid, sender.name))
        return await self._show(lane.session.session_id, sender)

    async def conversation(self, sender: PlayerRef, lane_id: str) -> list[Text]:
        """One of the sender's conversations by its lane (``/ai history <id>``): the session
        it is on now, in memory or recorded; an empty history when it never had one."""
        session_id = await asyncio.to_thread(self._runtime.lanes.current_session_id, lane_id)
        return await self._show(session_id or "", sender)

    async def public(self, sender: PlayerRef | None) -> list[Text]:
        """The public session, to an operator or the console."""
        return await self._show(
            self._runtime.lanes.public.session.session_id, sender, shared_only=True
        )

    async def _show(
        self, session_id: str, sender: PlayerRef | None, *, shared_only: bool = False
    ) -> list[Text]:
        """``shared_only``: the public session's, which leaves out a turn that took a personal
        tool result (answered to its asker alone, never in the shared session)."""
        runtime = self._runtime
        plane = runtime.plane
        name = sender.name if sender is not None else "console"
        turns = await asyncio.to_thread(runtime.archive.turns_of, session_id)
        if shared_only:
            turns = [turn for turn in turns if not turn.holds_personal_result()]
        entries = entries_of(turns, plane.config.identity.name, plane.redact)
        values = {"player": name, "entries": str(len(entries))}
        if not entries:
            return [runtime.text("history.empty", values)]
        plugin = runtime.plugin
        link = runtime.link
        if (
            sender is not None
            and link is not None
            and plugin is not None
            and plugin.has(BOOKS_FEATURE)
        ):
            title = f"{plane.config.identity.name}: history"[:BOOK_TITLE_CHARS]
            book = OutputBook(player=sender.uuid, title=title, pages=book_pages(entries))
            try:
                await link.request("output.book", book)
            except LinkError as exc:  # the lines below still show it
                log.info("history book for %s not opened: %s", name, exc)
            else:
                runtime.audit.record(
                    "history.shown", {"player": name, "session_id": session_id, "book": True}
                )
                return [runtime.text("history.opened", values)]
        runtime.audit.record(
            "history.shown", {"player": name, "session_id": session_id, "book": False}
        )
        return [runtime.text("commands.line", {"line": line}) for line in dump_lines(entries)]
