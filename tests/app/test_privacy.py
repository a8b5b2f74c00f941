"""What is one player's stays theirs, through the application (the provider real HTTP over
loopback, the stores real): forget and /ai delete reach the conversation index, a player lists
and forgets its entries and shares a memory for their public questions, an operator's reach
into another player's memories is by UUID and audited, typed titles are redacted before they
are kept, and a retry answers in the conversation that failed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bridge.memory.store import MemoryStore

from .conftest import ALEX, EVERY_NODE, STEVE, WAIT, App, open_app, write_config
from .scripted_provider import ScriptedProvider
from .test_private import said

CONFIG = "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
SECRET = "sk-unit-secret-key"
HISTORY = [*EVERY_NODE, "mineclaw.command.history"]
"""An operator's nodes: /mineclaw history shows them the public session."""
"""The provider's key in providers.yml: a secret value the redactor knows."""


async def opened(tmp_path: Path, provider: ScriptedProvider, **kw: object) -> App:
    config = tmp_path / "config"
    write_config(config, provider.port, CONFIG, **kw)  # type: ignore[arg-type]
    return await open_app(config, provider)


def store_of(app: App) -> MemoryStore:
    store = app.runtime.memories
    assert store is not None
    return store


async def asked_privately(app: App, question: str, answer: str) -> None:
    app.provider.answer(answer)
    await app.command("ai", *question.split(), player=STEVE)
    await said(app, answer)
    lane = app.runtime.lanes.lanes.find_private(STEVE.uuid)
    assert lane is not None and lane.task is not None
    await asyncio.wait_for(asyncio.shield(lane.task), WAIT)


def found(app: App, word: str, asker: str = STEVE.uuid) -> list[str]:
    hits = store_of(app).search(word, asker_uuid=asker, limit=10, scopes=("conversation",))
    return [hit.memory.text for hit in hits]


async def test_forget_all_and_ai_delete_reach_the_conversation_index(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        await asked_privately(app, "my locker code is quokka", "noted quokka")
        await app.command("ai", "new", "second", player=STEVE)
        await asked_privately(app, "the wombat farm is east", "noted wombat")
        assert found(app, "quokka") and found(app, "wombat")
        # /ai delete of conversation 2 takes its entries; conversation 1's stay.
        await app.command("ai", "switch", "1", player=STEVE)
        await app.command("ai", "delete", "2", player=STEVE)
        assert found(app, "wombat") == [] and found(app, "quokka")
        # The player sees their entries, and forget all takes what is left.
        listed = " ".join(await app.command("memory", "conversations", player=STEVE))
        assert "quokka" in listed
        forgot = " ".join(await app.command("memory", "forget", "all", player=STEVE))
        assert "Forgot 1" in forgot
        assert found(app, "quokka") == []
    finally:
        await app.runtime.aclose()


async def test_a_player_forgets_one_entry_by_its_id(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        await asked_privately(app, "my locker code is quokka", "noted quokka")
        [entry] = store_of(app).conversations(STEVE.uuid)
        # Alex cannot, Steve can.
        refused = " ".join(await app.command("memory", "forget", entry.memory_id, player=ALEX))
        assert "no memory" in refused
        assert found(app, "quokka")
        await app.command("memory", "forget", entry.memory_id, player=STEVE)
        assert found(app, "quokka") == []
    finally:
        await app.runtime.aclose()


async def test_a_shared_memory_is_recalled_into_its_owners_public_questions_only_then(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        await app.runtime.memory_tools.remember(  # type: ignore[union-attr]
            {"text": "Steve's locker code is 4711"},
            _context(),
        )
        [memory] = store_of(app).personal(STEVE.uuid)
        provider.answer("hm")
        await app.chat("@ai what is the code of my locker?", player=STEVE)
        await app.turn_done()
        assert b"4711" not in provider.requests[-1].body
        shared = " ".join(await app.command("memory", "share", memory.memory_id, player=STEVE))
        assert "shared" in shared
        # Alex cannot share Steve's memory.
        other = " ".join(await app.command("memory", "share", memory.memory_id, player=ALEX))
        assert "no memory" in other
        assert "to forget" not in other  # a share was answered as if it were a forget
        provider.answer("4711, Steve")
        await app.chat("@ai what is the code of my locker?", player=STEVE)
        await app.turn_done()
        assert b"4711" in provider.requests[-1].body
        listed = " ".join(await app.command("memory", player=STEVE))
        assert "shared" in listed
    finally:
        await app.runtime.aclose()


def _context() -> object:
    from bridge.tools.registry import CallContext

    return CallContext("t-x", "c-1", STEVE.uuid, STEVE.name, lane_id="ai-x")


async def test_an_operators_reach_into_anothers_memories_is_by_uuid_and_audited(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        store = store_of(app)
        tools = app.runtime.memory_tools
        assert tools is not None
        await tools.remember({"text": "Steve's base is behind the waterfall"}, _context())
        # Another player once wrote a memory under the name "Steve" (a rename): a name is
        # not who a player is.
        from bridge.tools.registry import CallContext

        impostor = CallContext("t-y", "c-1", ALEX.uuid, "Steve", lane_id="ai-y")
        await tools.remember({"text": "Alex's secret shed"}, impostor)
        listed = " ".join(await app.command("memory", "list", STEVE.uuid, player=None))
        assert "waterfall" in listed and "shed" not in listed
        forgot = " ".join(await app.command("memory", "forget", "all", STEVE.uuid, player=None))
        assert "Forgot 1" in forgot
        assert store.personal(STEVE.uuid) == [] and len(store.personal(ALEX.uuid)) == 1
        # A name names the player online now, by their UUID, or nobody.
        app.link.responders["players.list"] = _online(ALEX)
        by_name = " ".join(await app.command("memory", "list", "Alex", player=None))
        assert "shed" in by_name
        nobody = " ".join(await app.command("memory", "list", "Steve", player=None))
        assert "shed" not in nobody and "waterfall" not in nobody
        records = _audited(app, "memory.others")
        assert [(r["action"], r["target"]) for r in records][:2] == [
            ("list", STEVE.uuid),
            ("forget_all", STEVE.uuid),
        ]
        assert records[0]["actor"] == "console"
    finally:
        await app.runtime.aclose()


def _online(*players: object) -> object:
    from bridge.link.messages import PlayersListResult

    return lambda _: PlayersListResult(players=list(players))  # type: ignore[arg-type]


def _audited(app: App, kind: str) -> list[dict[str, object]]:
    app.runtime.audit.flush()
    return [dict(event.fields) for event in app.runtime.audit.events(kind)]


async def test_titles_typed_with_new_and_rename_are_redacted_before_they_are_kept(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        started = " ".join(await app.command("ai", "new", "key", SECRET, player=STEVE))
        assert SECRET not in started
        await app.command("ai", "rename", "2", "again", SECRET, player=STEVE)
        state = app.runtime.conversations
        assert state is not None
        titles = [c.title or "" for c in state.shelf(STEVE.uuid).newest_first()]
        assert titles and all(SECRET not in title for title in titles)
        listed = " ".join(await app.command("ai", "list", player=STEVE))
        assert SECRET not in listed
    finally:
        await app.runtime.aclose()


async def test_a_retry_answers_in_the_conversation_that_failed(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider, max_attempts=1)
    try:
        await asked_privately(app, "where is my house?", "behind the hill")
        provider.fail(500)
        since = len(app.link.sent)
        await app.command("ai", "how", "do", "repeaters", "work?", player=STEVE)
        await app.link.wait_for(
            lambda name, data: name == "output.chat" and "/mineclaw retry" in str(data.text),
            since=since,
        )
        await app.command("ai", "new", "elsewhere", player=STEVE)
        provider.answer("they delay signals")
        await app.command("retry", player=STEVE)
        await said(app, "they delay signals")
        # The retried question was asked with conversation 1's history, not conversation 2's.
        body = json.loads(provider.requests[-1].body)
        texts = [m["content"] for m in body["messages"] if m["role"] == "user"]
        assert texts[-1] == "how do repeaters work?"
        assert "where is my house?" in texts
    finally:
        await app.runtime.aclose()


async def test_a_public_answer_that_carries_a_personal_result_reaches_its_asker_alone(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        tools = app.runtime.memory_tools
        assert tools is not None
        await tools.remember({"text": "Steve's locker code is 4711"}, _context())
        provider.call_tools(("recall", {"query": "locker code"}))
        provider.answer("Your locker code is 4711, Steve.")
        since = len(app.link.sent)
        await app.chat("@ai what is my locker code? look it up", player=STEVE)
        await app.turn_done()
        reply = await said(app, "Your locker code is 4711", since)
        assert (reply.target, reply.player) == ("player", STEVE.uuid)
        broadcast = [
            data
            for name, data in app.link.sent[since:]
            if name == "output.chat" and data.target == "broadcast"
        ]
        assert not [d for d in broadcast if "4711" in str(d.text)]
        # Nothing of the turn is in the shared session or the public index.
        provider.answer("no idea")
        await app.chat("@ai what did Steve just ask?", player=ALEX)
        await app.turn_done()
        assert b"4711" not in provider.requests[-1].body
        assert found(app, "4711", asker=ALEX.uuid) == []
    finally:
        await app.runtime.aclose()


async def test_forgetting_a_memory_takes_the_private_turn_that_said_it(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        provider.call_tools(("remember", {"text": "Steve's locker code is quokka 4711"}))
        await asked_privately(app, "remember my locker code quokka 4711", "kept, Steve")
        [memory] = store_of(app).personal(STEVE.uuid)
        assert found(app, "quokka")
        await app.command("memory", "forget", memory.memory_id, player=STEVE)
        assert found(app, "quokka") == []
    finally:
        await app.runtime.aclose()


async def test_a_public_answer_for_its_asker_alone_stays_out_after_a_restart_and_of_history(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    """The asker's own public turn is archived under the public session's id (the archive is
    the owner's record); a restart rebuilds the public session from the archive, and
    /mineclaw history shows it: neither may bring the answer to anyone else."""
    app = await opened(tmp_path, provider)
    try:
        tools = app.runtime.memory_tools
        assert tools is not None
        await tools.remember({"text": "Steve's locker code is 4711"}, _context())
        provider.call_tools(("recall", {"query": "locker code"}))
        provider.answer("Your locker code is 4711, Steve.")
        await app.chat("@ai what is my locker code? look it up", player=STEVE)
        await app.turn_done()
        provider.answer("Hello everyone.")
        await app.chat("@ai say hello to everyone", player=STEVE)
        await app.turn_done()
        shown = " ".join(await app.command("history", player=None, granted=HISTORY))
        assert "Hello everyone" in shown and "4711" not in shown
    finally:
        await app.runtime.aclose()
    again = await open_app(tmp_path / "config", provider)
    try:
        provider.answer("no idea")
        await again.chat("@ai what did Steve ask before?", player=ALEX)
        await again.turn_done()
        body = provider.requests[-1].body
        assert b"Hello everyone" in body and b"4711" not in body
        shown = " ".join(await again.command("history", player=None, granted=HISTORY))
        assert "Hello everyone" in shown and "4711" not in shown
    finally:
        await again.runtime.aclose()


async def test_what_is_forgotten_while_the_turn_that_said_it_runs_is_not_indexed_after(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        tools = app.runtime.memory_tools
        assert tools is not None
        await tools.remember({"text": "Steve's locker code is quokka 4711"}, _context())
        [memory] = store_of(app).personal(STEVE.uuid)
        # Each forget lands while a private turn that says the words is still being answered:
        # the turn is indexed when it ends, after the forget.
        for word, question, forget in (
            ("quokka", "my locker code is quokka 4711", ("memory", "forget", memory.memory_id)),
            ("wombat", "the wombat farm is east", ("memory", "forget", "all")),
        ):
            held = provider.held("noted ", question.split()[-2])
            await app.command("ai", *question.split(), player=STEVE)
            await asyncio.wait_for(held.streaming.wait(), WAIT)
            lane = app.runtime.lanes.lanes.find_private(STEVE.uuid)
            assert lane is not None and lane.task is not None
            running = lane.task
            await app.command(*forget, player=STEVE)
            held.release.set()
            await asyncio.wait_for(asyncio.shield(running), WAIT)
            assert found(app, word) == [], forget
        # A turn that begins after the forget is indexed as ever.
        await asked_privately(app, "the wombat farm is west now", "noted wombat")
        assert found(app, "wombat")
    finally:
        await app.runtime.aclose()
