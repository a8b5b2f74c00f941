"""Memory through the application, against a real loopback HTTP provider whose recorded
request bodies are searched: Steve's personal memory never reaches a byte sent for Alex's
turns; ``/mineclaw memory`` lists and forgets, and memories outlive a clear and a restart."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from bridge.policy.budgets import periods_at
from bridge.store.usage import SERVER

from .conftest import ALEX, STEVE, WAIT, App, open_app
from .scripted_provider import ScriptedProvider
from .test_private import opened, said

BASE = "120 64 -300"


def memory_ids(lines: list[str]) -> list[str]:
    return [m.group() for line in lines for m in re.finditer(r"\bm[0-9a-f]{8}\b", line)]


async def remember_privately(app: App, provider: ScriptedProvider) -> None:
    provider.call_tools(("remember", {"text": f"Steve's base is at {BASE} behind the waterfall"}))
    provider.answer("noted, Steve")
    await app.command("ai", "remember", "my", "base", "is", "behind", "the", "waterfall")
    await said(app, "noted, Steve")


async def test_steves_memory_never_reaches_a_request_for_alex(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        await remember_privately(app, provider)
        remembered = await said(app, "Remembered:")
        assert remembered.player == STEVE.uuid and BASE in str(remembered.text)
        kept = len(provider.requests)

        # Alex asks in public with every word of it, and has the model search for it too.
        provider.call_tools(("recall", {"query": f"base waterfall {BASE}"}))
        provider.answer("I do not know of one")
        await app.chat(f"@ai whose base is behind the waterfall at {BASE}?", player=ALEX)
        await app.turn_done()
        alex_first = provider.requests[kept:]

        # Steve asks in public: a public answer is everyone's, so his unshared memory is not
        # in its request; his private question recalls it (so the searches can fail).
        provider.answer("at your usual place")
        await app.chat("@ai where is my base behind the waterfall?", player=STEVE)
        await app.turn_done()
        steve_public = provider.requests[len(provider.requests) - 1]
        provider.answer("by the falls, Steve")
        await app.command("ai", "where", "is", "my", "base", "behind", "the", "waterfall?")
        await said(app, "by the falls, Steve")
        steve_private = provider.requests[len(provider.requests) - 1]

        # Alex again, after Steve's public turn is in the session.
        provider.answer("still no idea")
        await app.chat("@ai which base is behind the waterfall?", player=ALEX)
        await app.turn_done()
        alex_later = provider.requests[-1]
    finally:
        await app.runtime.aclose()

    assert len(alex_first) == 2  # the recall round and the answer
    for request in (*alex_first, alex_later):
        # Alex typed the coordinates himself in his first question: look for what only the
        # memory holds.
        assert b"Steve's base" not in request.body
        assert b"Steve's own note" not in request.body
    assert b"Steve's base" not in steve_public.body
    assert b"Steve's base is at 120 64 -300" in steve_private.body
    assert b"Steve's own note" in steve_private.body


async def test_players_list_and_forget_their_own_memories(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        await remember_privately(app, provider)
        steve_lines = await app.command("memory", player=STEVE)
        assert len(steve_lines) == 1 and BASE in steve_lines[0]
        (memory_id,) = memory_ids(steve_lines)
        assert "No memories kept for Alex" in (await app.command("memory", player=ALEX))[0]
        # Alex cannot forget it by its id, nor list it without the node.
        assert "no memory" in (await app.command("memory", "forget", memory_id, player=ALEX))[0]
        refused = await app.command("memory", "list", "Steve", player=ALEX)
        assert "may not use /mineclaw memory" in refused[0]
        # The console (which holds every node) can see it, naming Steve by his UUID.
        listed = await app.command("memory", "list", STEVE.uuid, player=None, granted=[])
        assert memory_ids(listed) == [memory_id]
        # So can a player holding mineclaw.memory.others.
        listed = await app.command(
            "memory", "list", STEVE.uuid, player=ALEX, granted=["mineclaw.memory.others"]
        )
        assert memory_ids(listed) == [memory_id]
        # It survives a clear of both lanes.
        await app.command("clear")
        await app.command("ai", "clear")
        assert memory_ids(await app.command("memory", player=STEVE)) == [memory_id]
        forgot = await app.command("memory", "forget", memory_id, player=STEVE)
        assert forgot == ["<gray>Forgot 1 memories."]
        assert "No memories kept for Steve" in (await app.command("memory", player=STEVE))[0]
        assert app.runtime.memories is not None
        assert app.runtime.memories.search("waterfall", asker_uuid=STEVE.uuid, limit=5) == []
        usage = await app.command("memory", "frobnicate", "x", "y", player=STEVE)
        assert "Usage: /mineclaw memory" in usage[0]
    finally:
        await app.runtime.aclose()


async def test_memories_survive_a_restart(tmp_path: Path, provider: ScriptedProvider) -> None:
    app = await opened(tmp_path, provider)
    try:
        await remember_privately(app, provider)
    finally:
        await app.runtime.aclose()
    again = await open_app(tmp_path / "config", provider)
    try:
        lines = await again.command("memory", player=STEVE)
        assert len(memory_ids(lines)) == 1 and BASE in lines[0]
        provider.answer("behind the waterfall")
        await again.command("ai", "where", "is", "my", "base?")
        await said(again, "behind the waterfall")
        assert b"Steve's base is at 120 64 -300" in provider.requests[-1].body
    finally:
        await again.runtime.aclose()


async def test_the_owners_workspace_notes_are_server_memories(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    config = tmp_path / "config"
    app = await opened(tmp_path, provider)
    try:
        notes = config / "workspace" / "memory"
        notes.mkdir(parents=True)
        (notes / "rules.md").write_text("# Rules\n\n- The emerald shop is run by Alex.\n")
        assert "version 2" in (await app.command("reload"))[0]
        listed = await app.command("memory", "server", player=ALEX)
        assert len(listed) == 1 and "emerald shop is run by Alex" in listed[0]
        provider.answer("Alex runs it")
        await app.chat("@ai who runs the emerald shop?", player=STEVE)
        await app.turn_done()
        assert b"emerald shop is run by Alex" in provider.requests[-1].body
        # Edited away: gone from the store and from recall.
        (notes / "rules.md").write_text("# Rules\n")
        assert "version 3" in (await app.command("reload"))[0]
        assert "No memories kept" in (await app.command("memory", "server"))[0]
        provider.answer("no idea")
        await app.chat("@ai who runs the emerald shop?", player=STEVE)
        await app.turn_done()
        assert b"emerald shop is run by Alex" not in provider.requests[-1].body
    finally:
        await app.runtime.aclose()


async def test_recall_finds_ones_own_private_conversations_and_public_ones(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        provider.answer("the lighthouse key is under the red carpet")
        await app.command("ai", "where", "did", "I", "hide", "the", "lighthouse", "key?")
        await said(app, "under the red carpet")
        provider.answer("the lighthouse is on the north coast")
        await app.chat("@ai where is the lighthouse?", player=ALEX)
        await app.turn_done()

        # Alex asks the model to search: his result holds the public turn, not Steve's lane.
        provider.call_tools(("recall", {"query": "lighthouse key carpet"}))
        provider.answer("found it")
        await app.chat("@ai what did we say about the lighthouse?", player=ALEX)
        await app.turn_done()
        alex_result = provider.requests[-1].body
        assert b"north coast" in alex_result
        assert b"red carpet" not in alex_result

        # Steve's own search finds his private conversation.
        provider.call_tools(("recall", {"query": "lighthouse key carpet"}))
        provider.answer("you hid it")
        await app.command("ai", "what", "did", "we", "talk", "about", "the", "lighthouse?")
        await said(app, "you hid it")
        steve_result = provider.requests[-1].body
        assert b"under the red carpet" in steve_result
        assert b'"conversation' in steve_result or b"conversation" in steve_result
    finally:
        await app.runtime.aclose()


async def caught_up(app: App, model: str) -> None:
    """Until every memory has a vector of ``model`` and no catch-up runs."""
    embedder, store = app.runtime.memory_embedder, app.runtime.memories
    assert embedder is not None and store is not None

    async def done() -> None:
        while True:
            embedder.changed.clear()
            embedded, total = store.embedded_count(model)
            if embedded == total and not embedder.running:
                return
            await embedder.changed.wait()

    await asyncio.wait_for(done(), WAIT)


async def test_memories_are_embedded_in_the_background_and_recalled_by_meaning(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    from tests.memory.embedding_server import EmbeddingServer

    vectors = EmbeddingServer()
    await vectors.start()
    config = tmp_path / "config"
    app = await opened(tmp_path, provider)
    try:
        with (config / "config.yml").open("a") as config_yml:
            config_yml.write("memory:\n  embeddings: vec/nomic-embed\n")
        # A provider providers.yml does not define is refused, naming the field.
        refused = (await app.command("reload"))[0]
        assert "memory.embeddings: provider 'vec' is not configured" in refused
        providers = (config / "providers.yml").read_text()
        (config / "providers.yml").write_text(
            providers.replace(
                "models:",
                f"  vec:\n    api:\n      type: openai_chat_completions\n"
                f"      base_url: {vectors.base_url}\n    api_key: sk-vec\n"
                "    retry:\n      initial_backoff_ms: 0\n      max_backoff_ms: 0\nmodels:",
                1,
            )
        )
        assert "version 2" in (await app.command("reload"))[0]
        embedder = app.runtime.memory_embedder
        assert embedder is not None
        provider.call_tools(("remember", {"text": "Steve's castle is at 120 64 -300"}))
        provider.answer("noted, Steve")
        await app.command("ai", "remember", "my", "castle")
        await said(app, "noted, Steve")
        await caught_up(app, "nomic-embed")
        status = " | ".join(await app.command("status"))
        # The memory and the turn that wrote it (indexed for recall over the archive).
        assert "memory: embeddings nomic-embed: 2 of 2 embedded" in status
        # No word in common with the memory, only a meaning.
        provider.answer("at your castle")
        await app.command("ai", "where", "is", "my", "home?")
        await said(app, "at your castle")
        assert b"Steve's castle is at 120 64 -300" in provider.requests[-1].body
        assert any(body.get("input") == ["where is my home?"] for body in vectors.bodies)
        # A new model: everything is embedded again in the background.
        text = (config / "config.yml").read_text().replace("nomic-embed", "other-embed")
        (config / "config.yml").write_text(text)
        assert "version 3" in (await app.command("reload"))[0]
        await caught_up(app, "other-embed")
        status = " | ".join(await app.command("status"))
        assert "memory: embeddings other-embed: 3 of 3 embedded" in status
        # Every vector is the owner's cost: the server's, under memory.embedding.
        words = sum(
            len(re.findall(r"[a-z]+", text.lower()))
            for body in vectors.bodies
            for text in body["input"]
        )
        budgets = app.runtime.budgets
        assert budgets is not None
        periods = periods_at(budgets.now(), app.runtime.plane.config.budgets.zone())
        spent = budgets.book.by_purpose(SERVER, periods)  # type: ignore[attr-defined]
        assert spent["memory.embedding"].day.tokens == words > 0
        assert spent["memory.embedding"].day.estimated == 0
        usage = " | ".join(await app.command("usage"))
        assert f"of which memory vectors: today {words}" in usage
    finally:
        await app.runtime.aclose()
        await vectors.stop()
