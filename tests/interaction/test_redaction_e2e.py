"""Secrets end to end, with the testkit JVM: a four-word passphrase from ``.env`` streamed in an
answer never shows in an action-bar frame, not even its first words before the rest arrives, nor
in the reply, the chat, or a provider request; a quoted passphrase a player types reaches the
provider redacted whole."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from .test_turns_e2e import NO_COOLDOWNS, world

pytestmark = pytest.mark.jvm

PASSPHRASE = "purple monkey dishwasher quartz"
CHAT = "mineclaw.command.chat"


def leaked(text: str) -> bool:
    words = PASSPHRASE.split()
    return any(" ".join(words[i : i + 2]) in text for i in range(len(words) - 1))


async def test_a_streamed_passphrase_never_shows_in_part(tmp_path: Path) -> None:
    files = {".env": f"RCON_PASSWORD={PASSPHRASE}\n"}
    async with world(tmp_path, NO_COOLDOWNS, files) as w:
        await w.add("Steve", [CHAT])
        # The first chunk holds three of the four words; the rest waits until released, so
        # a frame is shown while only the start of the secret has arrived.
        held = w.provider.held("The rcon phrase is purple monkey dishwasher ", "quartz, keep it.")
        since = w.mark()
        question = 'what is it? secret: "correct horse battery staple"'
        assert (await w.chat("Steve", f"@ai {question}"))["outcome"] == "public"
        await asyncio.wait_for(held.streaming.wait(), 30)
        first = await w.testkit.wait_event(
            lambda e: e.get("event") == "actionbar" and "phrase" in e.get("text", ""),
            since=since,
        )
        assert not leaked(first["text"]), first
        held.release.set()
        reply = await w.message("*", "keep it", since)
        assert not leaked(reply) and "[redacted: configured secret]" in reply
        frames = [e["text"] for e in w.testkit.events[since:] if e.get("event") == "actionbar"]
        assert frames and not any(leaked(frame) for frame in frames), frames
        body = w.provider.requests[-1].body.decode()
        assert "battery staple" not in body and "[redacted: secret]" in body
