"""What is one player's stays theirs, and what the owner revokes is gone at once (issue 44), end
to end: the testkit JVM (the real plugin core), ``python -m bridge serve`` and a scripted
provider.

- A personal memory is in none of its owner's public requests until they share it; a public turn
  that took a personal result (``recall``) answers its asker alone, and neither another
  player's next request nor an operator's ``/mineclaw history`` book holds it.
- The console names a player by UUID (or by the name of a player online now, never an offline
  name); ``/mineclaw retry`` answers in the conversation that failed.
- A reload that takes a server out of ``servers.yml`` closes its link at once and stops its
  running and waiting turns, and so does rotating ``link.token`` for the default server:
  nothing more is asked of the model for them.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from .processes import EVENT_TIMEOUT
from .test_game_facts_e2e import tool_results
from .test_link_rotation_e2e import rotate
from .test_turns_e2e import NO_COOLDOWNS, REPLY_PREFIX, World, user_texts, world

pytestmark = pytest.mark.jvm

CHAT = "mineclaw.command.chat"
PRIVATE = "mineclaw.command.private"
HISTORY = "mineclaw.command.history"
TO_ASKER = "→ you] "
STEVE_UUID = "3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f"
LOCKER = "Steve's locker code is 4711"
MEMORY_ID = re.compile(r"\bm[0-9a-f]{8}\b")


async def _steve_joins(w: World) -> None:
    """Once the link is up, Steve (a fixed UUID, chat and private) joins."""
    await w.testkit.wait_event(lambda e: e.get("event") == "link.state")
    await w.testkit.send(
        {"op": "player.add", "name": "Steve", "uuid": STEVE_UUID, "permissions": [CHAT, PRIVATE]}
    )


async def test_a_personal_memory_stays_out_of_public_turns_and_the_public_book(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, NO_COOLDOWNS) as w:
        await _steve_joins(w)
        await w.add("Alex", [CHAT])
        await w.add("Olivia", [CHAT, HISTORY])

        w.provider.call_tools(("remember", {"text": LOCKER}))
        w.provider.answer("Kept.")
        since = w.mark()
        await w.command("Steve", "ai", "remember that my locker code is 4711")
        await w.message("Steve", "Kept.", since)

        # Unshared: not in Steve's own public request, whatever the question.
        w.provider.answer("I cannot say.")
        since = w.mark()
        await w.chat("Steve", "@ai what is the code of my locker?")
        await w.message("*", REPLY_PREFIX, since)
        assert "4711" not in json.dumps(w.provider.bodies()[-1])

        # Shared by its owner: recalled into their public question.
        [memory_id] = MEMORY_ID.findall(" ".join(await w.command("Steve", "memory")))
        assert "shared" in " ".join(await w.command("Steve", "memory", "share", memory_id))
        w.provider.answer("Steve shared it.")
        since = w.mark()
        await w.chat("Steve", "@ai what is the code of my locker?")
        await w.message("*", REPLY_PREFIX, since)
        assert "4711" in json.dumps(w.provider.bodies()[-1])
        await w.command("Steve", "memory", "unshare", memory_id)

        # A public turn that takes a personal result answers its asker alone.
        w.provider.call_tools(("recall", {"query": "locker code"}))
        w.provider.answer("Your locker code is 4711.")
        since = w.mark()
        await w.chat("Steve", "@ai look up my locker code")
        await w.message("Steve", TO_ASKER + "Your locker code is 4711.", since)
        assert "4711" in json.dumps(tool_results(w.provider.bodies()[-1]))
        assert not [m for m in w.messages(since) if m.get("to") != "Steve" and "4711" in m["text"]]

        w.provider.answer("No idea.")
        since = w.mark()
        await w.chat("Alex", "@ai what did Steve ask you just now?")
        await w.message("*", REPLY_PREFIX, since)
        assert "4711" not in json.dumps(w.provider.bodies()[-1])

        since = w.mark()
        await w.command("Olivia", "history")
        book = await w.testkit.wait_event(
            lambda e: e.get("event") == "book" and e.get("to") == "Olivia", since=since
        )
        pages = "\n".join(book["pages"])
        assert "Mineclaw: No idea." in pages and "4711" not in pages


async def test_the_console_names_players_by_uuid_and_a_retry_answers_where_it_failed(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, NO_COOLDOWNS) as w:
        await _steve_joins(w)
        w.provider.call_tools(("remember", {"text": LOCKER}))
        w.provider.answer("Kept.")
        since = w.mark()
        await w.command("Steve", "ai", "where is my house? and remember my locker code 4711")
        await w.message("Steve", "Kept.", since)

        # By UUID, and by the name of a player online now; an offline name is nobody.
        assert "4711" in " ".join(await w.command("console", "memory", "list", STEVE_UUID))
        assert "4711" in " ".join(await w.command("console", "memory", "list", "Steve"))

        # A second conversation (the title is redacted before it is kept: tests/app).
        await w.command("Steve", "ai", "new", "repeaters")
        # A question failing in conversation 2 is retried there after a switch to 1.
        w.provider.fail(500, times=3)
        since = w.mark()
        await w.command("Steve", "ai", "how do repeaters work?")
        await w.message("Steve", "/mineclaw retry", since)
        await w.command("Steve", "ai", "switch", "1")
        w.provider.answer("They delay signals.")
        since = w.mark()
        await w.command("Steve", "retry")
        await w.message("Steve", "They delay signals.", since)
        assert user_texts(w.provider.bodies()[-1]) == ["how do repeaters work?"]

        # The testkit runs its commands in order: Steve is gone when the console asks.
        await w.testkit.send({"op": "player.remove", "name": "Steve"})
        nobody = " ".join(await w.command("console", "memory", "list", "Steve"))
        assert "4711" not in nobody


LOBBY_TOKEN = "l" * 43


async def test_a_reload_that_removes_a_server_stops_its_turns_at_once(tmp_path: Path) -> None:
    servers = "schema: 1\nservers:\n  lobby:\n    token: ${LOBBY_T}\n"
    async with world(
        tmp_path,
        NO_COOLDOWNS,
        files={"servers.yml": servers},
        testkit_args=("--token", LOBBY_TOKEN, "--server-id", "lobby"),
        bridge_env={"LOBBY_T": LOBBY_TOKEN, "OTHER_T": "o" * 43},
    ) as w:
        await w.add("Steve", [CHAT])
        await w.add("Alex", [CHAT])
        held = w.provider.held("A long ", "story.")
        assert (await w.chat("Steve", "@ai tell me a long story"))["outcome"] == "public"
        await asyncio.wait_for(held.streaming.wait(), EVENT_TIMEOUT)
        # Alex waits in the lobby's line; his turn would keep a memory with no link needed.
        w.provider.call_tools(("remember", {"text": "Alex's locker code is 4711"}))
        w.provider.answer("Kept.")
        assert (await w.chat("Alex", "@ai remember my locker code 4711"))["outcome"] == "public"
        asked = len(w.provider.requests)

        (w.config / "servers.yml").write_text(
            "schema: 1\nservers:\n  other:\n    token: ${OTHER_T}\n"
        )
        since = w.mark()
        await w.testkit.send({"op": "command", "sender": "console", "args": ["reload"], "ref": "r"})
        down = await w.testkit.wait_event(lambda e: e.get("event") == "link.down", since=since)
        assert "removed from servers.yml" in json.dumps(down)
        await w.bridge.stderr.wait_for(
            r"server lobby: turn \S+ of Steve stopped \(the owner revoked", timeout=EVENT_TIMEOUT
        )
        held.release.set()
        assert len(w.provider.requests) == asked


async def test_a_rotated_link_token_stops_the_default_servers_turns(tmp_path: Path) -> None:
    async with world(tmp_path, NO_COOLDOWNS) as w:
        await w.add("Steve", [CHAT])
        await w.add("Alex", [CHAT])
        held = w.provider.held("A long ", "story.")
        assert (await w.chat("Steve", "@ai tell me a long story"))["outcome"] == "public"
        await asyncio.wait_for(held.streaming.wait(), EVENT_TIMEOUT)
        w.provider.call_tools(("remember", {"text": "Alex's locker code is 4711"}))
        w.provider.answer("Kept.")
        await w.chat("Alex", "@ai remember my locker code 4711")
        asked = len(w.provider.requests)
        since = w.mark()
        rotate(w.bridge.token_file)
        down = await w.testkit.wait_event(lambda e: e.get("event") == "link.down", since=since)
        assert "rotated" in json.dumps(down)
        await w.bridge.stderr.wait_for(
            r"server default: turn \S+ of Steve stopped \(the owner revoked", timeout=EVENT_TIMEOUT
        )
        held.release.set()
        # The plugin links again with the new token; Steve is told his question was cut.
        await w.message("Steve", "revoked", since)
        # Steve's question is not sent again (a revoked link's); Alex's, dropped from the
        # line, is (protocol 1.5) and answered to Alex alone.
        await w.message("Alex", "Kept.", since)
        late = [b for b in w.provider.bodies()[asked:] if "long story" in json.dumps(b)]
        assert late == []
