"""Private lanes (``/ai``) through the application: side by side with the public session under
the cap, each answer to its own audience, per-lane clear and stop, the asker's own stop, and
cooldowns counted across lanes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bridge.turns.lanes import private_lane_id

from .conftest import ALEX, STEVE, WAIT, App, open_app, rendered, write_config
from .scripted_provider import ScriptedProvider
from .test_queue import BOB, data_place

CHAT = "mineclaw.command.chat"
PRIVATE = "mineclaw.command.private"


def user_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


async def said(app: App, text: str, since: int = 0) -> Any:
    """The output.chat frame that carries ``text``."""
    return await app.link.wait_for(
        lambda name, data: name == "output.chat" and text in rendered(data.text), since=since
    )


async def opened(tmp_path: Path, provider: ScriptedProvider, extra: str = "") -> App:
    config = tmp_path / "config"
    cooldowns = "rate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
    write_config(config, provider.port, "schema: 1\n" + cooldowns + extra)
    return await open_app(config, provider)


async def test_two_private_lanes_and_a_public_turn_run_together_each_answer_to_its_audience(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        held = [provider.held(f"answer {n}") for n in range(3)]
        lines = await app.command("ai", "where", "is", "my", "house?", player=STEVE)
        assert "where is my house?" in lines[0]  # the question, echoed to the asker alone
        await asyncio.wait_for(held[0].streaming.wait(), WAIT)
        await app.command("ai", "what did I mine?", player=ALEX)
        await asyncio.wait_for(held[1].streaming.wait(), WAIT)
        assert (await app.chat("@ai what time is it", player=BOB)).decision == "accept"
        await asyncio.wait_for(held[2].streaming.wait(), WAIT)
        assert app.runtime.lanes.cap.running == 3  # all three stream at once

        for reply in held:
            reply.release.set()
        steve, alex, bob = [await said(app, f"answer {n}") for n in range(3)]
        assert (steve.target, steve.player) == ("player", STEVE.uuid)
        assert (alex.target, alex.player) == ("player", ALEX.uuid)
        assert bob.target == "broadcast"
        assert "→ you" in rendered(steve.text) and "→ you" not in rendered(bob.text)
        broadcast = [rendered(d.text) for d in app.link.of("output.chat") if d.target != "player"]
        assert not [line for line in broadcast if "answer 0" in line or "answer 1" in line]
        to_steve = [rendered(d.text) for d in app.link.of("output.chat") if d.player == STEVE.uuid]
        assert not [line for line in to_steve if "answer 1" in line]

        bodies = provider.bodies()
        assert [user_texts(b) for b in bodies] == [
            ["where is my house?"],
            ["what did I mine?"],
            ["what time is it"],
        ]
        # Each lane keeps its own session; the archive names the lane in the session id.
        for lane in app.runtime.lanes.lanes:
            if lane.task is not None:
                await asyncio.wait_for(asyncio.shield(lane.task), WAIT)
        ids = app.runtime.archive.session_ids()
        assert app.runtime.session.session_id in ids
        assert any(i.startswith(private_lane_id(STEVE.uuid) + ".") for i in ids)
        assert any(i.startswith(private_lane_id(ALEX.uuid) + ".") for i in ids)
        assert STEVE.uuid not in " ".join(str(b) for b in bodies)

        # The next private question replays only that player's own conversation.
        provider.answer("again")
        await app.command("ai", "and now?", player=STEVE)
        await said(app, "again")
        assert user_texts(provider.bodies()[-1]) == ["where is my house?", "and now?"]
    finally:
        await app.runtime.aclose()


async def test_past_the_cap_a_private_question_waits_with_its_place(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider, "concurrency:\n  max_concurrent_turns: 2\n")
    try:
        first, second = provider.held("public"), provider.held("steve's")
        await app.chat("@ai one", player=BOB)
        await asyncio.wait_for(first.streaming.wait(), WAIT)
        await app.command("ai", "two", player=STEVE)
        await asyncio.wait_for(second.streaming.wait(), WAIT)
        lines = await app.command("ai", "three", player=ALEX)  # Alex's lane is free, the cap not
        assert "three" in lines[0]
        await app.link.wait_for(lambda name, data: data_place(name, data) == (ALEX.uuid, "1"))
        assert len(provider.requests) == 2
        provider.answer("alex's")
        first.release.set()
        alex = await said(app, "alex's")
        assert (alex.target, alex.player) == ("player", ALEX.uuid)
        second.release.set()
        await said(app, "steve's")
    finally:
        await app.runtime.aclose()


async def test_the_asker_may_stop_their_own_turn_and_nobody_else_without_the_node(
    app: App, provider: ScriptedProvider
) -> None:
    held = provider.held("never shown")
    await app.chat("@ai tell me a long story", player=STEVE)
    await asyncio.wait_for(held.streaming.wait(), WAIT)
    assert (
        "may not use /mineclaw stop" in (await app.command("stop", player=ALEX, granted=[CHAT]))[0]
    )
    assert app.runtime.engine.active
    assert "Stopped" in (await app.command("stop", player=STEVE, granted=[CHAT]))[0]
    await app.turn_done()
    assert len(app.runtime.session.state.turns) == 0  # nothing of a stopped turn is kept

    # A private answer is stopped by its player with /ai stop or /mineclaw stop private.
    held = provider.held("never shown either")
    await app.command("ai", "a long private story", player=ALEX, granted=[PRIVATE])
    await asyncio.wait_for(held.streaming.wait(), WAIT)
    lane = app.runtime.lanes.lanes.find_private(ALEX.uuid)
    assert lane is not None and lane.engine.active
    assert "No answer" in (await app.command("stop", "private", player=STEVE))[0]
    assert "Stopped" in (await app.command("ai", "stop", player=ALEX, granted=[PRIVATE]))[0]
    assert lane.task is not None
    await asyncio.wait_for(asyncio.shield(lane.task), WAIT)
    assert not lane.busy and len(lane.session.state.turns) == 0


async def test_clear_acts_on_the_lane_it_is_typed_for(app: App, provider: ScriptedProvider) -> None:
    provider.answer("public answer")
    await app.chat("@ai public question", player=STEVE)
    await said(app, "public answer")
    provider.answer("private answer")
    await app.command("ai", "private question", player=STEVE, granted=[PRIVATE])
    await said(app, "private answer")
    lane = app.runtime.lanes.lanes.find_private(STEVE.uuid)
    assert lane is not None
    for each in app.runtime.lanes.lanes:
        if each.task is not None:
            await asyncio.wait_for(asyncio.shield(each.task), WAIT)
    public_id, private_id = app.runtime.session.session_id, lane.session.session_id

    refused = await app.command("clear", player=STEVE, granted=[CHAT, PRIVATE])
    assert "may not use /mineclaw clear" in refused[0]
    assert (
        "new private conversation"
        in (await app.command("clear", "private", player=STEVE, granted=[PRIVATE]))[0]
    )
    assert lane.session.session_id != private_id and lane.session.state.turns == ()
    assert app.runtime.session.session_id == public_id  # the public session is untouched
    assert len(app.runtime.session.state.turns) == 1

    # A lane not in memory (never used, forgotten, or from before a restart) is cleared too,
    # so the archive cannot bring the old conversation back on the next question.
    assert app.runtime.lanes.lanes.find_private(ALEX.uuid) is None
    await app.command("ai", "clear", player=ALEX, granted=[PRIVATE])
    alex_lane = app.runtime.lanes.lanes.find_private(ALEX.uuid)
    assert alex_lane is not None and alex_lane.session.state.turns == ()
    app.runtime.audit.flush()
    cleared = [e.fields.get("lane") for e in app.runtime.audit.events("session.clear")]
    assert cleared == [lane.lane_id, alex_lane.lane_id]

    assert "new session" in (await app.command("clear", player=STEVE))[0]
    assert app.runtime.session.session_id != public_id
    assert "Usage" in (await app.command("clear", "everything", player=STEVE))[0]


async def test_private_questions_pass_the_gates_and_share_the_cooldowns(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    config = tmp_path / "config"
    write_config(
        config,
        provider.port,
        "schema: 1\nrate_limits:\n  player_cooldown_ms: 600000\n  global_cooldown_ms: 0\n",
    )
    app = await open_app(config, provider)
    try:
        assert (
            "may not use /mineclaw ai"
            in (await app.command("ai", "hi", player=STEVE, granted=[CHAT]))[0]
        )
        assert "Only players" in (await app.command("ai", "hi", player=None))[0]
        assert (
            "/ai followed by your question"
            in (await app.command("ai", player=STEVE, granted=[PRIVATE]))[0]
        )
        provider.answer("public")
        await app.chat("@ai hello", player=STEVE, granted=[CHAT, PRIVATE])
        await said(app, "public")
        # The public wake started Steve's cooldown: his private question waits for it too.
        lines = await app.command("ai", "and privately?", player=STEVE, granted=[CHAT, PRIVATE])
        assert "Please wait" in lines[0]
        assert len(provider.requests) == 1
    finally:
        await app.runtime.aclose()
