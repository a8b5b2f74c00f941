"""Sessions survive a restart, prompts do not: real processes (the testkit JVM, ``python -m
bridge serve`` killed with SIGKILL and started again, a scripted provider over HTTP)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .processes import EVENT_TIMEOUT, BridgeProcess
from .test_lanes_e2e import ask
from .test_turns_e2e import OP, World, user_texts, world

pytestmark = pytest.mark.jvm

STEVE = [*OP, "mineclaw.tool.run_command"]
CHAT = ["mineclaw.command.chat", "mineclaw.command.approve"]


async def answered(w: World, player: str, question: str, answer: str) -> None:
    w.provider.answer(answer)
    since = w.mark()
    await w.chat(player, f"@ai {question}")
    await w.message("*", answer, since)


async def restart(w: World) -> int:
    """SIGKILL the bridge, start it again on the same folder; the mark before the kill."""
    since = w.mark()
    await w.bridge.kill()
    await w.testkit.wait_event(lambda e: e.get("event") == "link.down", since=since)
    w.bridge = await BridgeProcess.start(w.config, port=w.port)
    await w.testkit.relinked(since)
    return since


def audit_records(config: Path, kind: str) -> list[dict[str, object]]:
    lines = (config / "data" / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    return [r for r in records if r.get("kind") == kind]


async def test_a_killed_bridge_comes_back_with_the_conversation_and_expires_the_open_prompt(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        await w.add("Steve", STEVE)
        await w.add("Alex", CHAT)
        await answered(w, "Steve", "remember the number 41", "I will remember 41.")
        await answered(w, "Alex", "and my colour is blue", "Blue, noted.")
        # Mid-conversation: a command for Alex waits for Alex's confirmation when the bridge dies.
        w.provider.call_tools(
            (
                "run_command",
                {"command": "give Alex minecraft:bread 2", "intent": "feed", "player": "Alex"},
            )
        )
        since = w.mark()
        await w.chat("Steve", "@ai give Alex some bread")
        await w.testkit.wait_event(
            lambda e: e.get("event") == "approval" and e.get("to") == "Alex",
            since=since,
            timeout=EVENT_TIMEOUT,
        )
        # The plugin kept Steve's question (protocol 1.5): the restarted bridge answers it.
        w.provider.answer("Sent again: bread is on its way.")
        since = await restart(w)
        await w.message("*", "Sent again: bread is on its way.", since)
        # Alex, still online, is told the request he was asked about has expired.
        await w.message("Alex", "The request to run give Alex minecraft:bread 2 expired", since)

        # The prompt could not survive: reported as expired, in the audit log and the log.
        [expired] = audit_records(w.config, "approval.expired")
        fields = expired["fields"]
        assert isinstance(fields, dict)
        assert fields["target"] == "Alex" and fields["requester"] == "Steve"
        assert fields["command"] == "give Alex minecraft:bread 2"
        await w.bridge.stderr.wait_for(
            r"approval prompt expired by the restart: Alex", timeout=EVENT_TIMEOUT
        )

        # The next request carries the earlier turns; the unfinished attempt is not there, the
        # answer to the question sent again is.
        await answered(w, "Steve", "what was the number", "It was 41.")
        texts = user_texts(w.provider.bodies()[-1])
        assert texts == [
            "remember the number 41",
            "and my colour is blue",
            "give Alex some bread",
            "what was the number",
        ]
        assistant = [
            m["content"] for m in w.provider.bodies()[-1]["messages"] if m["role"] == "assistant"
        ]
        assert assistant == [
            "I will remember 41.",
            "Blue, noted.",
            "Sent again: bread is on its way.",
        ]


async def test_a_cleared_session_stays_cleared_across_a_restart(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        await w.add("Steve", STEVE)
        await answered(w, "Steve", "an old topic", "Old answer.")
        await w.command("Steve", "clear")
        await restart(w)
        await answered(w, "Steve", "a new topic", "New answer.")
        assert user_texts(w.provider.bodies()[-1]) == ["a new topic"]
        # ...and the new session is the one that comes back after the next restart.
        await restart(w)
        await answered(w, "Steve", "still there?", "Yes.")
        assert user_texts(w.provider.bodies()[-1]) == ["a new topic", "still there?"]


async def test_a_private_conversation_survives_a_kill_and_stays_private(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        await w.add("Steve", [*STEVE, "mineclaw.command.private"])
        await answered(w, "Steve", "a public question", "A public answer.")
        w.provider.answer("Your secret is safe.")
        since = w.mark()
        await ask(w, "Steve", "my secret word is marble")
        await w.message("Steve", "Your secret is safe.", since)
        await restart(w)
        w.provider.answer("It was marble.")
        since = w.mark()
        await ask(w, "Steve", "what was my secret word")
        await w.message("Steve", "It was marble.", since)
        # The private lane came back with its own turn, and only with it.
        assert user_texts(w.provider.bodies()[-1]) == [
            "my secret word is marble",
            "what was my secret word",
        ]
        # The public session came back on its own, without the private turns.
        await answered(w, "Steve", "and in public?", "Public again.")
        assert user_texts(w.provider.bodies()[-1]) == ["a public question", "and in public?"]
