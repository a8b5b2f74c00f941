"""Listen mode in the application: lines said during a turn reach the next request with their
speakers; ``listen.when_refused`` keep and cancel; players who opted out are never sent."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bridge.app.players.listen_optouts import FILE_NAME, parse_file
from bridge.app.players.state_import import import_files
from bridge.store.database import SqliteDatabase
from bridge.store.player_state import PlayerState
from bridge.turns.listen import OVERHEARD_HEADING

from .conftest import ALEX, NO_COOLDOWNS, STEVE, App, open_app, rendered, write_config
from .scripted_provider import ScriptedProvider

NOTCH = type(STEVE)(uuid="7c7c7c7c-8b7d-4c6a-9e2f-1a2b3c4d5e6f", name="Notch")
CHAT = ["mineclaw.command.chat"]


def users(body: dict[str, object]) -> list[tuple[str | None, str]]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [(m.get("name"), m["content"]) for m in messages if m["role"] == "user"]


async def _busy(app: App, question: str = "what should I build?") -> asyncio.Event:
    held = app.provider.held("Thinking ", "hard")
    assert (await app.chat(question)).decision == "accept"
    await asyncio.wait_for(held.streaming.wait(), 20)
    return held.release


async def test_lines_said_during_a_turn_reach_the_next_request_with_their_speakers(
    app: App,
) -> None:
    await app.command("listen", "on")
    release = await _busy(app)
    said = await app.chat("nice base, Steve", player=ALEX, granted=CHAT)
    assert (said.decision, said.ai_prefix, said.notice) == ("pass", False, None)
    # Without the chat permission a line is never sent, not even as overheard conversation.
    await app.chat("my secret plans", player=NOTCH, granted=[])
    release.set()
    await app.turn_done()

    app.provider.answer("Alex likes it.")
    await app.chat("@ai what did Alex say?")
    await app.turn_done()
    body = app.provider.bodies()[-1]
    assert users(body)[-3:] == [
        (None, OVERHEARD_HEADING),
        ("Alex", "nice base, Steve"),
        ("Steve", "what did Alex say?"),
    ]
    assert "secret plans" not in json.dumps(body)
    # Carried once: the turn that heard them keeps them in the session, not the buffer.
    assert app.runtime.listen.overheard.lines == ()


async def test_what_a_dropped_turn_overheard_waits_for_the_next(app: App) -> None:
    await app.command("listen", "on")
    release = await _busy(app)
    await app.chat("anyone there?", player=ALEX, granted=CHAT)
    release.set()
    await app.turn_done()
    app.provider.fail(400)  # not retried: the turn is dropped
    await app.chat("@ai first try")
    await app.turn_done()
    app.provider.answer("Yes.")
    await app.chat("@ai second try")
    await app.turn_done()
    assert ("Alex", "anyone there?") in users(app.provider.bodies()[-1])


@contextlib.asynccontextmanager
async def _app_with(
    tmp_path: Path, provider: ScriptedProvider, listen_yml: str
) -> AsyncIterator[App]:
    """An app whose ``config.yml`` has no cooldowns and the given ``listen`` section."""
    config = tmp_path / "config"
    write_config(config, provider.port, f"{NO_COOLDOWNS}listen:\n{listen_yml}")
    app = await open_app(config, provider)
    try:
        await app.command("listen", "on")
        yield app
    finally:
        await app.runtime.aclose()


async def test_the_carry_is_bounded_by_config(tmp_path: Path, provider: ScriptedProvider) -> None:
    async with _app_with(tmp_path, provider, "  carry_lines: 2\n  carry_chars: 12\n") as app:
        release = await _busy(app)
        for text in ("one", "two", "three", "a much longer line"):
            await app.chat(text, player=ALEX, granted=CHAT)
        release.set()
        await app.turn_done()
        app.provider.answer("ok")
        await app.chat("@ai next")
        await app.turn_done()
        heard = [text for name, text in users(app.provider.bodies()[-1]) if name == "Alex"]
        # Two lines at most, twelve characters in all: the long line is cut and the older go.
        assert heard == ["a much longe"]


async def test_cancel_mode_cancels_a_refused_line_and_tells_only_its_sender(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    async with _app_with(tmp_path, provider, "  when_refused: cancel\n") as app:
        release = await _busy(app)
        refused = await app.chat("nice base", player=ALEX, granted=CHAT)
        assert refused.decision == "refuse" and "busy" in rendered(refused.notice)
        unpermitted = await app.chat("hello", player=NOTCH, granted=[])
        assert unpermitted.decision == "refuse"
        assert "may not use the assistant" in rendered(unpermitted.notice)
        release.set()
        await app.turn_done()
        assert app.runtime.listen.overheard.lines == ()  # a cancelled line was never said


async def test_a_player_who_opted_out_is_never_sent_and_it_outlives_a_restart(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    config = tmp_path / "config"
    write_config(config, provider.port)
    app = await open_app(config, provider)
    try:
        await app.command("listen", "on")
        # Every player may opt out, without the listen node.
        lines = await app.command("listen", "ignore-me", player=ALEX, granted=[])
        assert "no longer sent" in lines[0]
        ignored = await app.chat("do not send this", player=ALEX, granted=CHAT)
        assert (ignored.decision, ignored.ai_prefix) == ("pass", False)
        release = await _busy(app)
        await app.chat("nor this", player=ALEX, granted=CHAT)
        release.set()
        await app.turn_done()
        assert app.runtime.listen.overheard.lines == ()
        # An explicit wake still reaches the assistant.
        app.provider.answer("Hi Alex.")
        assert (await app.chat("@ai hello", player=ALEX, granted=CHAT)).decision == "accept"
        await app.turn_done()
        sent = json.dumps(app.provider.bodies())
        assert "do not send this" not in sent and "nor this" not in sent
        assert app.runtime.players.listen_optouts() == {ALEX.uuid}
    finally:
        await app.runtime.aclose()

    app = await open_app(config, provider)
    try:
        assert app.runtime.listen.ignores(ALEX.uuid)
        await app.command("listen", "on")
        assert (await app.chat("still out", player=ALEX, granted=CHAT)).decision == "pass"
        lines = await app.command("listen", "include-me", player=ALEX, granted=[])
        assert "again" in lines[0]
        app.provider.answer("Welcome back.")
        back = await app.chat("Mineclaw, I am back in: what did I miss?", player=ALEX, granted=CHAT)
        assert back.decision == "accept"
        await app.turn_done()
        assert app.runtime.players.listen_optouts() == frozenset()
    finally:
        await app.runtime.aclose()


def test_an_unreadable_opt_out_file_is_set_aside_not_lost(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_text('{"version": 1, "players": ["not-a-uuid"]}')
    with PlayerState(SqliteDatabase(tmp_path / "state.sqlite3")) as store:
        assert import_files(tmp_path, store) == []
        assert store.listen_optouts() == frozenset()
    assert (tmp_path / (FILE_NAME + ".bad")).read_text().startswith('{"version": 1')


def test_the_opt_out_file_refuses_other_shapes() -> None:
    for text in ("[]", "{}", '{"version": 2, "players": []}', "\xff", '{"version": 1}'):
        with pytest.raises(ValueError):
            parse_file(text.encode(errors="surrogateescape"))


async def test_what_a_turn_answered_to_its_asker_alone_overheard_waits_for_the_next(
    app: App,
) -> None:
    # A public turn that took a personal result stays out of the public session (issue 44):
    # the lines it overheard would then be in no later request at all.
    await app.command("listen", "on")
    release = await _busy(app)
    await app.chat("the portal is behind spawn", player=ALEX, granted=CHAT)
    release.set()
    await app.turn_done()
    app.provider.call_tools(("recall", {"query": "my base"}))
    app.provider.answer("Nothing kept, Steve.")
    await app.chat("@ai look up my base")
    await app.turn_done()
    app.provider.answer("Behind spawn.")
    await app.chat("@ai where is the portal?", player=ALEX, granted=CHAT)
    await app.turn_done()
    assert ("Alex", "the portal is behind spawn") in users(app.provider.bodies()[-1])
