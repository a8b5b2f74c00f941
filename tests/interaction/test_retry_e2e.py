"""``/mineclaw retry`` end to end: the testkit JVM, ``python -m bridge serve`` and a scripted
provider that fails every attempt of the first turn. The asker sees the failure line, then the
offer; ``/mineclaw retry`` (which the plugin forwards without a node of its own) asks the same
question again and the answer is broadcast; a second retry finds nothing."""

from __future__ import annotations

from typing import Any

import pytest

from .test_turns_e2e import NO_COOLDOWNS, REPLY_PREFIX, asked_by, user_texts, world

pytestmark = pytest.mark.jvm

PLAYER = ["mineclaw.command.chat"]


async def test_a_failed_question_is_asked_again_with_mineclaw_retry(tmp_path: Any) -> None:
    async with world(tmp_path, NO_COOLDOWNS) as w:
        await w.add("Steve", PLAYER)
        w.provider.fail(500, times=3)  # every attempt of the turn
        since = w.mark()
        await w.chat("Steve", "@ai how do I tame a fox")
        offer = await w.message("Steve", "/mineclaw retry", since)
        assert "within 30 minutes" in offer
        shown = [e["text"] for e in w.messages(since) if e.get("to") == "Steve"]
        assert shown.index(offer) > 0  # after the failure line

        assert await w.command("console", "retry") == ["You have no failed question to ask again."]
        w.provider.answer("Feed it sweet berries.")
        since = w.mark()
        assert await w.command("Steve", "retry") == ["Asking Mineclaw again: how do I tame a fox"]
        reply = await w.message("*", REPLY_PREFIX, since)
        assert reply == asked_by("Steve") + "Feed it sweet berries."
        assert user_texts(w.provider.bodies()[-1]) == ["how do I tame a fox"]
        assert await w.command("Steve", "retry") == ["You have no failed question to ask again."]
