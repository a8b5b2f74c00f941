"""The wait line through the application: explicit wakes wait while the public lane is busy,
each waiting player sees their place in the action bar, a player who leaves or whose request
expired is dropped, and the rest go on in order."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bridge.link.handler import CURRENT_REQUEST_ID
from bridge.link.messages import ChatVerdict, PlayerRef

from .conftest import ALEX, STEVE, WAIT, App, open_app, rendered, write_config
from .scripted_provider import ScriptedProvider

BOB = PlayerRef(uuid="0b6a1c9e-2222-4c6a-9e2f-1a2b3c4d5e6f", name="Bob")
CAROL = PlayerRef(uuid="0b6a1c9e-3333-4c6a-9e2f-1a2b3c4d5e6f", name="Carol")
DAVE = PlayerRef(uuid="0b6a1c9e-4444-4c6a-9e2f-1a2b3c4d5e6f", name="Dave")
QUEUE_2 = (
    "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
    "concurrency:\n  queue_length: 2\n"
)


def places(app: App, since: int = 0) -> list[tuple[str, str]]:
    """(player uuid, place) of every place line sent to the action bar."""
    return [
        (data.player, data.text.values["place"])
        for name, data in app.link.sent[since:]
        if name == "output.actionbar" and data.text.values and "place" in data.text.values
    ]


async def chat_as(app: App, request_id: str, text: str, player: PlayerRef) -> ChatVerdict:
    token = CURRENT_REQUEST_ID.set(request_id)
    try:
        return await app.chat(text, player=player)
    finally:
        CURRENT_REQUEST_ID.reset(token)


async def reply(app: App, text: str, since: int = 0) -> Any:
    return await app.link.wait_for(
        lambda name, data: (
            name == "output.chat" and data.target == "broadcast" and text in rendered(data.text)
        ),
        since=since,
    )


async def test_wakes_wait_in_order_see_their_place_and_past_the_line_get_busy(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    config = tmp_path / "config"
    write_config(config, provider.port, QUEUE_2)
    app = await open_app(config, provider)
    try:
        held = provider.held("first answer")
        assert (await app.chat("@ai one", player=STEVE)).decision == "accept"
        await asyncio.wait_for(held.streaming.wait(), WAIT)
        assert (await app.chat("@ai two", player=ALEX)).decision == "accept"
        assert (await app.chat("@ai three", player=BOB)).decision == "accept"
        busy = await app.chat("@ai four", player=CAROL)  # past the line of two
        assert busy.decision == "refuse" and "busy" in rendered(busy.notice)
        again = await app.chat("@ai two again", player=ALEX)  # already waiting
        assert again.decision == "refuse" and "#1 in line" in rendered(again.notice)
        await app.link.wait_for(lambda name, data: data_place(name, data) == (BOB.uuid, "2"))
        assert places(app) == [(ALEX.uuid, "1"), (BOB.uuid, "2")]

        provider.answer("second answer")
        provider.answer("third answer")
        since = len(app.link.sent)
        held.release.set()
        await reply(app, "first answer")
        await reply(app, "second answer")
        # Alex's turn started: Bob moved up to first in line, and was told so.
        assert (BOB.uuid, "1") in places(app, since)
        await reply(app, "third answer")
        questions = [b["messages"][-1]["content"] for b in provider.bodies()]
        assert questions == ["one", "two", "three"]
        assert app.runtime.lanes.queue.waiting() == []
        assert CAROL.uuid not in {uuid for uuid, _ in places(app)}
    finally:
        await app.runtime.aclose()


def data_place(name: str, data: Any) -> tuple[str, str] | None:
    if name != "output.actionbar" or not data.text.values or "place" not in data.text.values:
        return None
    return data.player, data.text.values["place"]


async def test_a_player_who_leaves_or_whose_request_expired_leaves_the_line_and_nobody_else(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    config = tmp_path / "config"
    write_config(config, provider.port)
    app = await open_app(config, provider)
    try:
        held = provider.held("first answer")
        await app.chat("@ai one", player=STEVE)
        await asyncio.wait_for(held.streaming.wait(), WAIT)
        assert (await chat_as(app, "r-alex", "@ai from alex", ALEX)).decision == "accept"
        assert (await chat_as(app, "r-bob", "@ai from bob", BOB)).decision == "accept"
        assert (await chat_as(app, "r-dave", "@ai from dave", DAVE)).decision == "accept"
        await app.handler.on_player_quit(ALEX)
        await app.handler.on_chat_expired("r-bob")
        assert [e.player.name for e in app.runtime.lanes.queue.waiting()] == ["Dave"]
        await app.link.wait_for(lambda name, data: data_place(name, data) == (DAVE.uuid, "1"))

        provider.answer("dave's answer")
        held.release.set()
        await reply(app, "dave's answer")
        questions = [b["messages"][-1]["content"] for b in provider.bodies()]
        assert questions == ["one", "from dave"]
        app.runtime.audit.flush()
        assert len(app.runtime.audit.events("chat.expired")) == 1
    finally:
        await app.runtime.aclose()


async def test_a_queued_wake_that_started_before_its_expiry_came_is_stopped(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    # Seen in the soak under load: Alex was told "offline, not sent" (his verdict came after
    # the plugin's 250 ms), his wake had started from the line meanwhile, and was answered.
    config = tmp_path / "config"
    write_config(config, provider.port)
    app = await open_app(config, provider)
    try:
        first = provider.held("first answer")
        await app.chat("@ai one", player=STEVE)
        await asyncio.wait_for(first.streaming.wait(), WAIT)
        assert (await chat_as(app, "r-alex", "@ai from alex", ALEX)).decision == "accept"
        second = provider.held("An answer ", "nobody asked for")
        first.release.set()
        await asyncio.wait_for(second.streaming.wait(), WAIT)  # Alex's turn runs now
        await app.handler.on_chat_expired("r-alex")
        second.release.set()
        task = app.runtime.lanes.public.task
        assert task is not None
        await asyncio.wait_for(asyncio.shield(task), WAIT)
        said = [chat.text.model.get("message", "") for chat in app.link.of("output.chat")]
        assert not any("nobody asked for" in line for line in said), said
    finally:
        await app.runtime.aclose()
