"""Several private conversations end to end: the testkit JVM (the player types ``/ai ...``),
``python -m bridge serve`` killed with SIGKILL and started again, a scripted provider over
HTTP. Each conversation replays only its own turns, and the active one (with its turns) is
still the active one after the restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_lanes_e2e import ask
from .test_restart_e2e import restart
from .test_turns_e2e import NO_COOLDOWNS, World, user_texts, world

pytestmark = pytest.mark.jvm

CHAT = ["mineclaw.command.chat", "mineclaw.command.private"]


async def asked(w: World, question: str, answer: str) -> list[str]:
    """Steve's ``/ai question``; the user messages of the request that answered it."""
    w.provider.answer(answer)
    since = w.mark()
    await ask(w, "Steve", question)
    await w.message("Steve", answer, since)
    return user_texts(w.provider.bodies()[-1])


async def test_conversations_keep_their_own_turns_and_the_active_one_survives_a_restart(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, NO_COOLDOWNS) as w:
        await w.add("Steve", CHAT)
        assert await asked(w, "where is my house?", "At spawn.") == ["where is my house?"]
        started = await ask(w, "Steve", "new Redstone farm")
        assert started == [
            "Started conversation 2: Redstone farm. Your /ai questions go there now."
        ]
        assert await asked(w, "how do repeaters work?", "They delay.") == ["how do repeaters work?"]

        await restart(w)
        assert await asked(w, "and a clock?", "A comparator.") == [
            "how do repeaters work?",
            "and a clock?",
        ]
        listing = await ask(w, "Steve", "list")
        assert listing[0].startswith("Your conversations with")
        assert listing[1].startswith("> 2  Redstone farm") and listing[1].endswith(", active)")
        assert listing[2].startswith("  1  untitled  (") and "UTC" in listing[2]

        assert await ask(w, "Steve", "switch 1") == ["Now in conversation 1: untitled."]
        assert await asked(w, "and my bed?", "Beside it.") == [
            "where is my house?",
            "and my bed?",
        ]
        assert await ask(w, "Steve", "delete 2") == [
            "Deleted conversation 2 (Redstone farm). Your questions go to conversation 1."
        ]
        assert await ask(w, "Steve", "switch 2") == [
            "You have no conversation 2; /ai list shows them."
        ]
