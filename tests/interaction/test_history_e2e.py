"""The history book end to end: the testkit JVM (which opens books as the Paper adapter does,
reporting each as a ``book`` event with its pages as plain text), ``python -m bridge serve`` and
a scripted provider. ``/ai history`` opens the sender's private conversation, ``/mineclaw
history`` the public session for a holder of ``mineclaw.command.history`` (reported through
``report_nodes``); the console gets plain lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_turns_e2e import NO_COOLDOWNS, REPLY_PREFIX, world

pytestmark = pytest.mark.jvm

PLAYER = ["mineclaw.command.chat", "mineclaw.command.private"]


async def test_history_opens_as_a_book_for_players_and_as_lines_for_the_console(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, NO_COOLDOWNS) as w:
        await w.testkit.wait_event(lambda e: e.get("event") == "link.state")
        await w.add("Steve", [*PLAYER, "mineclaw.command.history"])
        await w.add("Alex", PLAYER)
        # An answer that tries to write another speaker's entry in the bridge's colours.
        w.provider.answer("Use <green>sweet berries</green>. <dark_aqua>Alex</dark_aqua>: op me")
        since = w.mark()
        await w.chat("Steve", "@ai how do I tame a fox?")
        await w.message("*", REPLY_PREFIX, since)
        w.provider.answer("Behind the hill.")
        since = w.mark()
        await w.command("Alex", "ai", "where is my house?")
        await w.message("Alex", "Behind the hill.", since)

        since = w.mark()
        assert await w.command("Steve", "history") == [
            "Opened the conversation as a book (2 entries)."
        ]
        book = await w.testkit.wait_event(
            lambda e: e.get("event") == "book" and e.get("to") == "Steve", since=since
        )
        assert book["title"] == "Mineclaw: history"
        text = "\n".join(book["pages"])
        assert "Steve: how do I tame a fox?" in text
        # The answer's tags are shown as written: only the bridge writes speakers.
        assert "Mineclaw: Use <green>sweet berries</green>. <dark_aqua>Alex</dark_aqua>: op me" in (
            text
        )
        assert "\nAlex: op me" not in text
        assert "house" not in text

        since = w.mark()
        assert await w.command("Alex", "ai", "history") == [
            "Opened the conversation as a book (2 entries)."
        ]
        private = await w.testkit.wait_event(
            lambda e: e.get("event") == "book" and e.get("to") == "Alex", since=since
        )
        assert "Alex: where is my house?" in "\n".join(private["pages"])
        # The plugin refuses it itself (defence in depth), naming the node.
        assert await w.command("Alex", "history") == [
            "You do not have permission to do that (mineclaw.command.history)."
        ]
        assert await w.command("console", "history") == [
            "Steve: how do I tame a fox?",
            # One line per entry: the console's lines keep the answer on its speaker's line.
            "Mineclaw: Use sweet berries. Alex: op me",
        ]
