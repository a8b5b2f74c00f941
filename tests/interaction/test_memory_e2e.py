"""Memory end to end with the testkit JVM (the real plugin core) and ``python -m bridge serve``:
the plugin reports ``mineclaw.memory.server`` (named by the bridge in ``link.state``) for the
player who holds it, so only that player's ``remember`` keeps a server memory, and only after
they said yes to it, in a public turn as in a private one (another player's overheard words
are not kept on the model's say-so); the asker is shown what was kept; after a clear, another
player's turn gets it by automatic recall, and ``/mineclaw memory server`` lists it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_ask_player_e2e import prompt_to
from .test_game_facts_e2e import tool_results
from .test_turns_e2e import REPLY_PREFIX, world

pytestmark = pytest.mark.jvm

CHAT = "mineclaw.command.chat"
APPROVE = "mineclaw.command.approve"
CLEAR = "mineclaw.command.clear"
SERVER_NODE = "mineclaw.memory.server"
CONFIG = (
    "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
    "environment:\n  tool_cooldown_ms: 0\n"
)
TO_ASKER = "→ you] "
RULE = "The emerald shop at spawn opens at noon"
CLAIM = "Alex owns the whole server"


async def test_only_the_holder_of_the_node_keeps_a_server_memory_and_everyone_recalls_it(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, CONFIG) as w:
        await w.testkit.wait_event(lambda e: e.get("event") == "link.state")
        await w.add("Steve", [CHAT, CLEAR, SERVER_NODE, APPROVE])
        await w.add("Alex", [CHAT])

        w.provider.call_tools(("remember", {"text": CLAIM, "scope": "server"}))
        w.provider.answer("I cannot keep that for everyone.")
        since = w.mark()
        await w.chat("Alex", "@ai remember for everyone that I own the server")
        # A turn that took a personal result (remember's) answers its asker alone.
        await w.message("Alex", TO_ASKER + "I cannot keep that for everyone.", since)
        [refused] = tool_results(w.provider.bodies()[-1])
        assert refused["ok"] is False and refused["error_code"] == "refused"
        assert SERVER_NODE in refused["message"]

        # Alex's words, overheard in public, passed on by the model: Steve is asked, says no.
        w.provider.call_tools(("remember", {"text": CLAIM, "scope": "server"}))
        w.provider.answer("Not kept.")
        since = w.mark()
        await w.chat("Steve", "@ai keep what Alex said for everyone")
        asked = await prompt_to(w, "Steve", since)
        assert CLAIM in asked["text"]
        no = asked["buttons"][1]["command"].removeprefix("/mineclaw ").split()
        await w.command("Steve", *no)
        await w.message("Steve", TO_ASKER + "Not kept.", since)
        refused = tool_results(w.provider.bodies()[-1])[-1]
        assert refused["ok"] is False and "did not agree" in refused["message"]

        w.provider.call_tools(("remember", {"text": RULE, "scope": "server"}))
        w.provider.answer("Noted for everyone.")
        since = w.mark()
        await w.chat("Steve", "@ai keep the shop hours for everyone")
        asked = await prompt_to(w, "Steve", since)
        assert RULE in asked["text"]
        yes = asked["buttons"][0]["command"].removeprefix("/mineclaw ").split()
        await w.command("Steve", *yes)
        assert RULE in await w.message("Steve", "Remembered:", since)
        await w.message("Steve", TO_ASKER + "Noted for everyone.", since)
        kept = tool_results(w.provider.bodies()[-1])[-1]
        assert kept["ok"] is True and kept["result"]["scope"] == "server"

        # A new session: what Alex's next request carries of it comes from recall alone.
        await w.command("Steve", "clear")
        w.provider.answer("At noon.")
        since = w.mark()
        await w.chat("Alex", "@ai when does the emerald shop open?")
        await w.message("*", REPLY_PREFIX, since)
        body = json.dumps(w.provider.bodies()[-1])
        assert RULE in body and CLAIM not in body
        listed = " | ".join(await w.command("Alex", "memory", "server"))
        assert RULE in listed and CLAIM not in listed


PRIVATE = "mineclaw.command.private"


async def test_forget_all_takes_the_players_conversation_entries_and_share_is_theirs(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, CONFIG) as w:
        await w.testkit.wait_event(lambda e: e.get("event") == "link.state")
        await w.add("Steve", [CHAT, PRIVATE])
        w.provider.answer("Noted, quokka.")
        since = w.mark()
        await w.command("Steve", "ai", "my locker code is quokka")
        await w.message("Steve", "Noted, quokka.", since)
        listed = " | ".join(await w.command("Steve", "memory", "conversations"))
        assert "quokka" in listed
        forgot = " | ".join(await w.command("Steve", "memory", "forget", "all"))
        assert "Forgot 1" in forgot
        assert "quokka" not in " | ".join(await w.command("Steve", "memory", "conversations"))
        # The model's recall finds nothing of it any more.
        w.provider.call_tools(("recall", {"query": "locker code quokka"}))
        w.provider.answer("Nothing kept.")
        since = w.mark()
        await w.command("Steve", "ai", "what was my locker code?")
        await w.message("Steve", "Nothing kept.", since)
        found = tool_results(w.provider.bodies()[-1])[-1]
        assert found["ok"] is True and found["result"]["memories"] == []
