"""Turn concurrency end to end with real processes (the testkit JVM, ``python -m bridge serve``
and a scripted provider), several players at once: the wait line and its places in the action
bar, two private ``/ai`` conversations and a public turn running together with each answer
reaching only its audience, and the asker's own stop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .test_turns_e2e import REPLY_PREFIX, World, user_texts, world

pytestmark = pytest.mark.jvm

CHAT = "mineclaw.command.chat"
PRIVATE = "mineclaw.command.private"
PLAYER = [CHAT, PRIVATE]  # what every player holds by default
NO_COOLDOWNS = "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"


async def ask(w: World, player: str, question: str) -> list[str]:
    """``/ai question`` as the player typed it; the reply lines they saw."""
    since, ref = w.mark(), f"a{w.mark()}"
    await w.testkit.send({"op": "ask", "player": player, "text": question, "ref": ref})
    await w.testkit.wait_event(
        lambda e: e.get("event") == "command.done" and e.get("ref") == ref, since=since
    )
    return [
        e["text"]
        for e in w.testkit.events[since:]
        if e.get("event") == "message" and e.get("to") == player
    ]


async def action_bar(w: World, to: str, contains: str, since: int) -> dict[str, Any]:
    return await w.testkit.wait_event(
        lambda e: e.get("event") == "actionbar" and e.get("to") == to and contains in e["text"],
        since=since,
    )


def seen_by(w: World, text: str, since: int = 0) -> set[str]:
    """Who saw a chat line containing ``text`` (``*`` for a broadcast)."""
    return {m["to"] for m in w.messages(since) if text in m["text"]}


async def test_wakes_during_a_turn_wait_in_order_and_each_sees_their_place(
    tmp_path: Path,
) -> None:
    config = NO_COOLDOWNS + "concurrency:\n  queue_length: 2\n"
    async with world(tmp_path, config) as w:
        for name in ("Steve", "Alex", "Bob", "Carol"):
            await w.add(name, PLAYER)
        held = w.provider.held("First ", "answer.")
        since = w.mark()
        assert (await w.chat("Steve", "@ai one"))["outcome"] == "public"
        await held.streaming.wait()
        # Two wait in line (their messages stay public); the third is past it and told busy.
        assert (await w.chat("Alex", "@ai two"))["outcome"] == "public"
        assert (await w.chat("Bob", "@ai three"))["outcome"] == "public"
        late = await w.chat("Carol", "@ai four")
        assert late["outcome"] == "cancelled"
        await w.message("Carol", "busy with another request", since)
        await action_bar(w, "Alex", "#1 in line", since)
        await action_bar(w, "Bob", "#2 in line", since)

        w.provider.answer("Second answer.")
        w.provider.answer("Third answer.")
        moved = w.mark()
        held.release.set()
        await w.message("*", "First answer.", since)
        await w.message("*", "Second answer.", since)
        # Alex's turn took the lane: Bob is next now, and is told so.
        await action_bar(w, "Bob", "#1 in line", moved)
        await w.message("*", "Third answer.", since)
        questions = [user_texts(body)[-1] for body in w.provider.bodies()]
        assert questions == ["one", "two", "three"]  # in the order they were asked
        assert not [
            e
            for e in w.testkit.events[since:]
            if e.get("to") == "Carol" and e.get("event") == "actionbar"
        ]


async def test_a_player_who_leaves_the_line_costs_nobody_else_their_place(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, NO_COOLDOWNS) as w:
        for name in ("Steve", "Alex", "Bob"):
            await w.add(name, PLAYER)
        held = w.provider.held("First.")
        since = w.mark()
        await w.chat("Steve", "@ai one")
        await held.streaming.wait()
        await w.chat("Alex", "@ai from alex")
        await w.chat("Bob", "@ai from bob")
        await action_bar(w, "Bob", "#2 in line", since)
        moved = w.mark()
        await w.testkit.send({"op": "player.remove", "name": "Alex"})
        await action_bar(w, "Bob", "#1 in line", moved)
        w.provider.answer("Bob's answer.")
        held.release.set()
        await w.message("*", "Bob's answer.", since)
        questions = [user_texts(body)[-1] for body in w.provider.bodies()]
        assert questions == ["one", "from bob"]  # Alex left: his question never ran


async def test_two_private_lanes_and_a_public_turn_run_together_each_reply_to_its_audience(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, NO_COOLDOWNS) as w:
        for name in ("Steve", "Alex", "Bob", "Carol"):
            await w.add(name, PLAYER)
        steve = w.provider.held("Your house is ", "at spawn.")
        alex = w.provider.held("You mined ", "diamonds.")
        public = w.provider.held("It is ", "noon.")
        since = w.mark()
        echoed = await ask(w, "Steve", "where is my house?")
        assert any("where is my house?" in line for line in echoed)
        await steve.streaming.wait()
        await ask(w, "Alex", "what did I mine?")
        await alex.streaming.wait()
        assert (await w.chat("Bob", "@ai what time is it"))["outcome"] == "public"
        await public.streaming.wait()  # all three stream at the same time

        for held in (public, alex, steve):
            held.release.set()
        await w.message("*", "It is noon.", since)
        await w.message("Steve", "Your house is at spawn.", since)
        await w.message("Alex", "You mined diamonds.", since)
        assert seen_by(w, "at spawn", since) == {"Steve"}
        assert seen_by(w, "diamonds", since) == {"Alex"}
        assert seen_by(w, "noon", since) == {"*"}
        assert seen_by(w, "where is my house?", since) == {"Steve"}  # the question too
        assert [user_texts(body) for body in w.provider.bodies()] == [
            ["where is my house?"],
            ["what did I mine?"],
            ["what time is it"],
        ]

        # Each private conversation goes on in its own session.
        w.provider.answer("Still at spawn.")
        await ask(w, "Steve", "and my farm?")
        await w.message("Steve", "Still at spawn.", since)
        assert user_texts(w.provider.bodies()[-1]) == ["where is my house?", "and my farm?"]
        status = " | ".join(await w.command("Steve", "status"))
        assert "1 turns" in status  # the public session holds only the public turn


async def test_the_asker_stops_their_own_turn_without_the_operator_node(tmp_path: Path) -> None:
    async with world(tmp_path, NO_COOLDOWNS) as w:
        await w.add("Steve", PLAYER)
        await w.add("Alex", PLAYER)
        held = w.provider.held("Never ", "shown.")
        since = w.mark()
        await w.chat("Steve", "@ai tell me a very long story")
        await held.streaming.wait()
        refused = await w.command("Alex", "stop")  # not his turn, no operator node
        assert any("may not use /mineclaw stop" in line for line in refused), refused
        assert any("Stopped" in line for line in await w.command("Steve", "stop"))
        # Once stopped, it is no longer his turn: stopping again needs the node like any stop.
        assert any("may not use" in line for line in await w.command("Steve", "stop"))

        held = w.provider.held("Never ", "private.")
        await ask(w, "Alex", "a long private story")
        await held.streaming.wait()
        assert any("Stopped" in line for line in await ask(w, "Alex", "stop"))
        w.provider.answer("After the stops.")
        await w.chat("Steve", "@ai after")
        await w.message("*", "After the stops.", since)
        assert not [m for m in w.messages(since) if "Never" in m["text"]]
        assert REPLY_PREFIX.strip() in " ".join(m["text"] for m in w.messages(since))
        assert user_texts(w.provider.bodies()[-1]) == ["after"]  # nothing stopped was kept
