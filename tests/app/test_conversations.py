"""Several private conversations per player through the application (the provider real HTTP
over loopback): each conversation replays only its own turns, the active one and the list
survive a restart, the limit, a switch refused while an answer runs, history by id, and a
conversations file that cannot be read."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from bridge.policy.budgets import periods_at
from bridge.store.archive import DATA_DIR_NAME
from bridge.store.usage import SERVER
from bridge.turns.billing import TITLE
from bridge.turns.lanes import private_lane_id

from .conftest import ALEX, STEVE, WAIT, App, open_app, write_config
from .scripted_provider import ScriptedProvider
from .test_private import said, user_texts

COOLDOWNS = "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
EMPTY = "<gray>Nothing to show yet."


async def opened(tmp_path: Path, provider: ScriptedProvider, extra: str = "") -> App:
    config = tmp_path / "config"
    write_config(config, provider.port, COOLDOWNS + extra)
    return await open_app(config, provider)


async def asked(app: App, question: str, answer: str) -> None:
    provider = app.provider
    provider.answer(answer)
    lines = await app.command("ai", question, player=STEVE)
    assert question in lines[0], lines
    await said(app, answer)
    await steves_turn_ended(app)


async def steves_turn_ended(app: App) -> None:
    """Steve's latest private turn has ended (its after-turn work, titles included, begun)."""
    lane = app.runtime.lanes.lanes.find_private(STEVE.uuid)
    assert lane is not None and lane.task is not None
    await asyncio.wait_for(asyncio.shield(lane.task), WAIT)


async def test_each_conversation_keeps_its_own_turns_and_the_active_one_survives_a_restart(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        await asked(app, "where is my house?", "at spawn")
        started = await app.command("ai", "new", "Redstone", "farm", player=STEVE)
        assert started == [
            "<green>Started conversation 2: Redstone farm. Your /ai questions go there now."
        ]
        await asked(app, "how do repeaters work?", "they delay")
        assert user_texts(provider.bodies()[-1]) == ["how do repeaters work?"]
        lane = app.runtime.lanes.lanes.find_private(STEVE.uuid)
        assert lane is not None and lane.lane_id == private_lane_id(STEVE.uuid) + "-2"

        assert await app.command("ai", "switch", "1", player=STEVE) == [
            "<green>Now in conversation 1: untitled."
        ]
        await asked(app, "and my bed?", "beside it")
        assert user_texts(provider.bodies()[-1]) == ["where is my house?", "and my bed?"]
        await app.command("ai", "rename", "1", "My <red>base</red>", player=STEVE)
        await app.command("ai", "switch", "2", player=STEVE)
        listing = await app.command("ai", "list", player=STEVE)
        assert listing[0].startswith("<gray>Your conversations with")
        assert "1  My <red>base</red>" in listing[1]  # asked in last; the title is a value
        assert listing[2].startswith("<white>> 2  Redstone farm") and "active" in listing[2]
        assert "UTC" in listing[1] and "UTC" in listing[2]
        # Alex has only his first conversation, untouched by Steve's.
        alex = await app.command("ai", "list", player=ALEX)
        assert len(alex) == 2 and "> 1  untitled" in alex[1] and "(-, active)" in alex[1]
        app.runtime.audit.flush()
        events = [e.fields["conversation"] for e in app.runtime.audit.events("conversation.switch")]
        assert events == ["1", "2"]
    finally:
        await app.runtime.aclose()

    again = await open_app(app.config, provider)
    try:
        provider.answer("a comparator")
        await again.command("ai", "and a clock?", player=STEVE)
        await said(again, "a comparator")
        # Back in conversation 2, with its own turns restored from the archive.
        assert user_texts(provider.bodies()[-1]) == ["how do repeaters work?", "and a clock?"]
        listing = await again.command("ai", "list", player=STEVE)
        assert listing[1].startswith("<white>> 2  Redstone farm")
    finally:
        await again.runtime.aclose()


async def test_the_limit_refuses_a_new_conversation_and_delete_frees_a_place(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider, "conversations:\n  max_per_player: 2\n")
    try:
        await app.command("ai", "new", player=STEVE)
        refused = await app.command("ai", "new", "third", player=STEVE)
        assert refused == [
            "<red>You already keep 2 conversations, the most allowed; /ai delete one first."
        ]
        deleted = await app.command("ai", "delete", "2", player=STEVE)
        assert deleted == [
            "<gray>Deleted conversation 2 (untitled). Your questions go to conversation 1."
        ]
        assert (await app.command("ai", "new", "third", player=STEVE))[0].startswith(
            "<green>Started conversation 3: third."
        )
        unknown = await app.command("ai", "switch", "2", player=STEVE)
        assert unknown == ["<red>You have no conversation 2; /ai list shows them."]
        # Without its id, a switch says how and which ids there are (it was asked as a question).
        asked_before = len(provider.bodies())
        bare = await app.command("ai", "switch", player=STEVE)
        assert bare[0] == "<gray>Usage: /mineclaw ai switch <id>"
        assert bare[1].startswith("<gray>Your conversations with") and len(bare) == 4, bare
        rename = await app.command("ai", "rename", player=STEVE)
        assert rename[0] == "<gray>Usage: /mineclaw ai rename <id> <title>"
        assert len(provider.bodies()) == asked_before
    finally:
        await app.runtime.aclose()


async def test_a_switch_while_the_answer_runs_is_refused_and_a_question_shaped_line_is_asked(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        await app.command("ai", "new", player=STEVE)
        held = provider.held("slow answer")
        await app.command("ai", "switch", "to", "creative?", player=STEVE)  # a question
        await asyncio.wait_for(held.streaming.wait(), WAIT)
        assert user_texts(provider.bodies()[-1]) == ["switch to creative?"]
        busy = await app.command("ai", "switch", "1", player=STEVE)
        assert busy == ["<red>Conversation 2 is still answering; wait for it or /ai stop it first."]
        assert (await app.command("ai", "delete", "2", player=STEVE)) == busy
        held.release.set()
        await said(app, "slow answer")
        await steves_turn_ended(app)
        assert (await app.command("ai", "switch", "1", player=STEVE))[0].startswith("<green>")
    finally:
        await app.runtime.aclose()


async def test_history_by_id_shows_that_conversation_active_or_not(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        await asked(app, "first question", "first answer")
        await app.command("ai", "new", player=STEVE)
        # This plugin opens no books: the lines of conversation 1, though 2 is active.
        lines = await app.command("ai", "history", "1", player=STEVE)
        assert lines == ["<gray>Steve: first question", "<gray>Mineclaw: first answer"]
        assert await app.command("ai", "history", player=STEVE) == [EMPTY]
        assert await app.command("ai", "history", "2", player=STEVE) == [EMPTY]
        unknown = await app.command("ai", "history", "7", player=STEVE)
        assert unknown == ["<red>You have no conversation 7; /ai list shows them."]
    finally:
        await app.runtime.aclose()


async def test_an_unreadable_conversations_file_is_set_aside_and_everyone_is_on_the_first(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    data = tmp_path / "config" / DATA_DIR_NAME
    data.mkdir(parents=True)
    bad = {
        "version": 1,
        "players": {
            STEVE.uuid: {"active": "5", "next_id": 6, "conversations": [{"id": "1"}]},
        },
    }
    (data / "conversations.json").write_text(json.dumps(bad))
    app = await opened(tmp_path, provider)
    try:
        assert (data / "conversations.json.bad").exists()
        listing = await app.command("ai", "list", player=STEVE)
        assert len(listing) == 2 and "> 1  untitled" in listing[1]
    finally:
        await app.runtime.aclose()


TITLED = "conversations:\n  titles: true\n  title_model: local/m2\n"


def tokens_of(app: App, holder: str, purpose: str) -> int:
    usage = app.runtime.usage
    assert usage is not None
    periods = periods_at(datetime.now(UTC), app.runtime.plane.config.budgets.zone())
    found = usage.by_purpose(holder, periods).get(purpose)
    return 0 if found is None else found.day.tokens


async def test_the_first_answered_turn_titles_the_conversation_with_the_title_model(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider, TITLED)
    try:
        await app.command("ai", "new", player=STEVE)
        provider.answer("use observers")
        provider.answer("Redstone clocks.", usage=(50, 4))  # the title request's
        await app.command("ai", "how do I build a clock?", player=STEVE)
        await said(app, "use observers")
        await steves_turn_ended(app)
        await app.runtime.conversation_titles.settled()
        title_request = provider.bodies()[-1]
        assert title_request["model"] == "m2"
        system = " ".join(
            m["content"] for m in title_request["messages"] if m["role"] in ("system", "developer")
        )
        assert "You name conversations" in system
        assert "Question: how do I build a clock?" in user_texts(title_request)[0]
        listing = await app.command("ai", "list", player=STEVE)
        assert listing[1].startswith("<white>> 2  Redstone clocks  ")
        # The server pays for it under its own purpose; the player does not.
        assert tokens_of(app, SERVER, TITLE) == 54
        assert tokens_of(app, STEVE.uuid, TITLE) == 0

        # Titled now: the next turn asks for no title; nor does a conversation the player
        # titled himself.
        requests = len(provider.requests)
        await asked(app, "and a faster one?", "use a comparator")
        await app.command("ai", "new", "My", "own", player=STEVE)
        await asked(app, "hello", "hi")
        await app.runtime.conversation_titles.settled()
        assert len(provider.requests) == requests + 2
        assert "2  Redstone clocks" in (await app.command("ai", "list", player=STEVE))[2]
    finally:
        await app.runtime.aclose()


async def test_without_titles_no_request_is_made(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        await asked(app, "hello", "hi")
        await app.runtime.conversation_titles.settled()
        assert len(provider.requests) == 1
        assert "> 1  untitled" in (await app.command("ai", "list", player=STEVE))[1]
    finally:
        await app.runtime.aclose()


async def test_a_failed_title_request_leaves_it_untitled_and_the_next_answer_tries_again(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider, TITLED)
    try:
        provider.answer("hi")
        provider.fail(500)  # the title request
        await app.command("ai", "hello", player=STEVE)
        await said(app, "hi")
        await steves_turn_ended(app)
        await app.runtime.conversation_titles.settled()
        assert len(provider.requests) == 2
        assert "> 1  untitled" in (await app.command("ai", "list", player=STEVE))[1]
        assert tokens_of(app, SERVER, TITLE) == 0  # refused before anything streamed

        provider.answer("hello again")
        provider.answer("Greetings")
        await app.command("ai", "hi again", player=STEVE)
        await said(app, "hello again")
        await steves_turn_ended(app)
        await app.runtime.conversation_titles.settled()
        assert "> 1  Greetings" in (await app.command("ai", "list", player=STEVE))[1]
    finally:
        await app.runtime.aclose()


async def test_a_question_starting_with_new_is_asked_and_a_long_title_asks_which(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    # `/ai new players get what?` started a conversation titled "players get what?".
    app = await opened(tmp_path, provider)
    try:
        await asked(app, "new players get what?", "A starter kit.")
        listing = await app.command("ai", "list", player=STEVE)
        assert len(listing) == 2, listing  # the heading and conversation 1: nothing new
        which = await app.command("ai", "new ideas for my castle build", player=STEVE)
        assert len(which) == 1 and 'new "ideas for my castle build"' in which[0], which
        assert len(await app.command("ai", "list", player=STEVE)) == 2
        quoted = await app.command("ai", 'new "ideas for my castle build"', player=STEVE)
        assert "ideas for my castle build" in quoted[0], quoted
    finally:
        await app.runtime.aclose()
