"""``ask_player`` end to end: the testkit JVM, ``python -m bridge serve`` and a scripted
provider. The model asks the asking player; the player answers with a click (the button's own
``/mineclaw approve|deny`` command), or a yes/no question with a gesture the plugin detects;
an unanswered question times out. Only the asked player's gesture counts, and a gesture with no
question pending does nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .test_turns_e2e import NO_COOLDOWNS, OP, REPLY_PREFIX, World, asked_by, world

pytestmark = pytest.mark.jvm

ASKED = [*OP, "mineclaw.command.approve"]
"""Answering a prompt, by click or gesture, needs the node (plugin.yml gives it to everyone)."""
NO_TOOL_COOLDOWN = NO_COOLDOWNS + "environment:\n  tool_cooldown_ms: 0\n"
CONFIRM = ("ask_player", {"question": "Shall I clear the weather for you?"})
ANSWER_WAIT = 120.0
"""Bound on a wait that spans a question's own timeout."""


async def prompt_to(w: World, player: str, since: int) -> dict[str, Any]:
    """The next clickable prompt shown to ``player``."""
    return await w.testkit.wait_event(
        lambda e: e.get("event") == "approval" and e.get("to") == player, since=since
    )


async def gesture(w: World, player: str, kind: str, **extra: Any) -> bool:
    ref = f"g{w.mark()}"
    await w.testkit.send({"op": "gesture", "player": player, "kind": kind, "ref": ref, **extra})
    done = await w.testkit.wait_event(
        lambda e: e.get("event") == "gesture.done" and e.get("ref") == ref
    )
    answered: bool = done["answered"]
    return answered


def tool_result(body: dict[str, Any]) -> dict[str, Any]:
    message = [m for m in body["messages"] if m["role"] == "tool"][-1]
    outcome: dict[str, Any] = json.loads(message["content"])
    assert outcome["ok"] is True, outcome
    result: dict[str, Any] = outcome["result"]
    return result


async def stopped_audit(w: World) -> dict[str, list[dict[str, Any]]]:
    """Stops the bridge (Ctrl-C: the audit log is written out as it closes), then reads the
    audit log's JSON-lines copy: the fields of each event, by kind."""
    assert await w.bridge.interrupt() == 0
    lines = (w.config / "data" / "audit.jsonl").read_text().splitlines()
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        event = json.loads(line)
        by_kind.setdefault(event["kind"], []).append(event["fields"])
    return by_kind


async def test_ask_player_answered_by_click_yes_no_and_a_choice(tmp_path: Path) -> None:
    # Two questions in two rounds of one turn, answered faster than the default tool cooldown.
    async with world(tmp_path, NO_TOOL_COOLDOWN) as w:
        await w.add("Steve", ASKED)
        w.provider.call_tools(CONFIRM)
        w.provider.call_tools(
            ("ask_player", {"question": "Day or night?", "options": ["Day", "Night", "Dusk"]})
        )
        w.provider.answer("Night it is.")
        since = w.mark()
        await w.chat("Steve", "@ai fix the sky")
        shown = await prompt_to(w, "Steve", since)
        assert "Shall I clear the weather for you?" in shown["text"]
        assert "sneak, look straight up" in shown["text"]  # the testkit detects gestures
        labels = [button["label"] for button in shown["buttons"]]
        assert labels == ["[Yes]", "[No]"]
        no = shown["buttons"][1]["command"].removeprefix("/mineclaw ").split()
        since = w.mark()
        lines = await w.command("Steve", *no)
        assert any("Answer sent" in line for line in lines), (lines, no)

        choice = await prompt_to(w, "Steve", since)
        assert "Day or night?" in choice["text"] and "sneak" not in choice["text"]
        labels = [button["label"] for button in choice["buttons"]]
        assert labels == ["[Day]", "[Night]", "[Dusk]", "[None of these]"]
        # A gesture cannot answer a choice.
        assert await gesture(w, "Steve", "sneak") is False
        night = choice["buttons"][1]["command"].removeprefix("/mineclaw ").split()
        since = w.mark()
        await w.command("Steve", *night)
        assert await w.message("*", REPLY_PREFIX, since) == asked_by("Steve") + "Night it is."

        bodies = w.provider.bodies()
        assert tool_result(bodies[1]) == {"status": "answered", "answer": "no", "by": "click"}
        assert tool_result(bodies[2]) == {
            "status": "answered",
            "choice": "Night",
            "index": 2,
            "by": "click",
        }
        logged = await stopped_audit(w)
        results = logged["ask.result"]
        assert [(r["kind"], r["status"]) for r in results] == [
            ("confirm", "answered"),
            ("choice", "answered"),
        ]
        answers = logged["approval.answer"]
        assert [(a["answer"], a["option"], a["kind"]) for a in answers] == [
            ("deny", None, "question"),
            ("approve", "2", "question"),
        ]


async def test_ask_player_approved_by_the_asked_players_gesture_only(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        await w.add("Steve", ASKED)
        await w.add("Alex", ASKED)
        # No question pending: a gesture does nothing.
        assert await gesture(w, "Steve", "sneak") is False
        w.provider.call_tools(CONFIRM)
        w.provider.answer("Clearing it.")
        since = w.mark()
        await w.chat("Steve", "@ai the rain is annoying")
        await prompt_to(w, "Steve", since)
        assert await gesture(w, "Alex", "sneak") is False  # not the asked player
        assert await gesture(w, "Steve", "use", item="minecraft:bread", edible=True) is False
        assert await gesture(w, "Steve", "look", pitch=-90) is False  # not looked away since
        assert await gesture(w, "Steve", "look", pitch=0) is False
        assert await gesture(w, "Steve", "look", pitch=-89.5) is True
        assert await w.message("Steve", "Answer sent", since)
        assert await w.message("*", REPLY_PREFIX, since) == asked_by("Steve") + "Clearing it."
        assert tool_result(w.provider.bodies()[1]) == {
            "status": "answered",
            "answer": "yes",
            "by": "gesture",
        }
        assert await gesture(w, "Steve", "sneak") is False  # used: nothing left to answer
        logged = await stopped_audit(w)
        answers = logged["approval.answer"]
        assert [(a["sender"], a["option"], a["verdict"]) for a in answers] == [
            ("Steve", "gesture", "approved")
        ]
        assert [(r["status"], r["by"]) for r in logged["ask.result"]] == [("answered", "gesture")]


async def test_an_unanswered_question_times_out_and_a_later_gesture_does_nothing(
    tmp_path: Path,
) -> None:
    # The plugin stops taking gestures a tenth of the time (here 300 ms) before the bridge's
    # deadline, so once the bridge has timed out, the plugin has too.
    config = NO_COOLDOWNS + "environment:\n  ask_timeout_ms: 3000\n"
    async with world(tmp_path, config) as w:
        await w.add("Steve", ASKED)
        w.provider.call_tools(CONFIRM)
        w.provider.answer("No answer, so I left the weather alone.")
        since = w.mark()
        await w.chat("Steve", "@ai the rain")
        shown = await prompt_to(w, "Steve", since)
        reply = await w.testkit.wait_event(
            lambda e: (
                e.get("event") == "message"
                and e.get("to") == "*"
                and e.get("text", "").startswith(REPLY_PREFIX)
            ),
            since=since,
            timeout=ANSWER_WAIT,
        )
        assert reply["text"] == asked_by("Steve") + "No answer, so I left the weather alone."
        assert tool_result(w.provider.bodies()[1]) == {"status": "timed_out"}
        # Past its expiry the plugin has forgotten the question; a late click is refused.
        assert await gesture(w, "Steve", "sneak") is False
        yes = shown["buttons"][0]["command"].removeprefix("/mineclaw ").split()
        lines = await w.command("Steve", *yes)
        assert any("not yours to answer" in line for line in lines), lines
        assert [r["status"] for r in (await stopped_audit(w))["ask.result"]] == ["timed_out"]
