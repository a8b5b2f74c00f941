"""Per-player state in the store, through the application, on SQLite and PostgreSQL: two
bridges on one store (two runtimes, as in a network) see one player's conversations, persona
choice and listen opt-out; a takeover serves them as the last bridge did; a conversation
number is never given twice and a deleted conversation's turns are never replayed; the files
of the bridges before the store are imported once and set aside (issue 50)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bridge.store.archive import DATA_DIR_NAME
from tests.storage_backends import Backend

from .conftest import ALEX, STEVE, App, hello, open_app, write_config
from .scripted_provider import ScriptedProvider
from .test_conversations import COOLDOWNS, asked, steves_turn_ended
from .test_private import said, user_texts

# Each test runs on both backends itself (the backend fixture) and links two bridges' folders to
# one store; the PostgreSQL pass's fresh database per folder would split them.
pytestmark = pytest.mark.sqlite_only

PASSWORD_VARIABLE = "MINECLAW_STORM_DB_PASSWORD"


def shared_config(tmp_path: Path, name: str, provider: ScriptedProvider, backend: Backend) -> Path:
    """A bridge's config folder on the test's store: the same SQLite files (one data folder,
    linked) or the same PostgreSQL database."""
    config = tmp_path / name
    storage = ""
    if backend.is_postgres:
        assert backend.server is not None and backend.dbname is not None
        storage = (
            "storage:\n  backend: postgresql\n"
            f"  dsn: {backend.server.dsn(backend.dbname)}\n"
            f"  password: ${{{PASSWORD_VARIABLE}}}\n"
        )
    write_config(config, provider.port, COOLDOWNS + storage)
    if backend.is_postgres:
        assert backend.server is not None
        with (config / ".env").open("a", encoding="utf-8") as env:
            env.write(f"{PASSWORD_VARIABLE}={backend.server.password}\n")
    else:
        backend.data_dir.mkdir(parents=True, exist_ok=True)
        (config / DATA_DIR_NAME).symlink_to(backend.data_dir, target_is_directory=True)
    return config


async def two_bridges(
    tmp_path: Path, provider: ScriptedProvider, backend: Backend
) -> tuple[App, App]:
    a = await open_app(shared_config(tmp_path, "a", provider, backend), provider)
    b = await open_app(shared_config(tmp_path, "b", provider, backend), provider)
    return a, b


async def test_a_takeover_serves_the_players_conversations_as_the_last_bridge_did(
    tmp_path: Path, provider: ScriptedProvider, backend: Backend
) -> None:
    a, b = await two_bridges(tmp_path, provider, backend)
    try:
        await b.command("ai", "list", player=STEVE)  # B knew Steve before, at conversation 1
        await asked(a, "where is my house?", "at spawn")
        await a.command("ai", "new", "Redstone", player=STEVE)
        await asked(a, "how do repeaters work?", "they delay")
        await a.command("ai", "new", "Nether", player=STEVE)
        await a.command("ai", "switch", "2", player=STEVE)
        before = await a.command("ai", "list", player=STEVE)
        # The server links to B (a takeover): B serves Steve exactly as A did.
        await b.handler.on_connected(b.link, hello())
        assert await b.command("ai", "list", player=STEVE) == before
        provider.answer("a comparator")
        await b.command("ai", "and a clock?", player=STEVE)
        await said(b, "a comparator")
        assert user_texts(provider.bodies()[-1]) == ["how do repeaters work?", "and a clock?"]
        # A number is never given twice: B's next conversation is 4, not A's 2 or 3 again.
        assert (await b.command("ai", "new", player=STEVE))[0].startswith(
            "<green>Started conversation 4"
        )
    finally:
        await a.runtime.aclose()
        await b.runtime.aclose()


async def test_a_deleted_conversation_is_never_reopened_nor_replayed(
    tmp_path: Path, provider: ScriptedProvider, backend: Backend
) -> None:
    a, b = await two_bridges(tmp_path, provider, backend)
    try:
        await a.command("ai", "new", "secret", player=STEVE)
        await asked(a, "my base is at 120 64 -300", "noted")
        await a.command("ai", "delete", "2", player=STEVE)
        # Another bridge, whose view of Steve was from before the delete.
        await b.handler.on_connected(b.link, hello())
        started = await b.command("ai", "new", player=STEVE)
        assert started[0].startswith("<green>Started conversation 3"), started
        provider.answer("hello")
        await b.command("ai", "anything new?", player=STEVE)
        await said(b, "hello")
        await steves_turn_ended(b)
        assert user_texts(provider.bodies()[-1]) == ["anything new?"]  # nothing of 2 replayed
    finally:
        await a.runtime.aclose()
        await b.runtime.aclose()


async def test_persona_choices_and_listen_optouts_are_the_networks(
    tmp_path: Path, provider: ScriptedProvider, backend: Backend
) -> None:
    a, b = await two_bridges(tmp_path, provider, backend)
    try:
        assert b.runtime.persona_choices is not None
        assert not b.runtime.listen.ignores(ALEX.uuid)  # B read the store at its start
        lines = await a.command("listen", "ignore-me", player=ALEX, granted=[])
        assert "no longer sent" in lines[0]
        await a.handler.personas.choose(STEVE.uuid, "pirate")
        # The server links to B: B leaves Alex out of listen mode and knows Steve's persona.
        await b.handler.on_connected(b.link, hello())
        await b.handler.players_read()
        assert b.runtime.listen.ignores(ALEX.uuid)
        assert b.runtime.persona_choices.chosen(STEVE.uuid) == "pirate"
        await a.command("listen", "include-me", player=ALEX, granted=[])
        await b.handler.on_connected(b.link, hello())
        await b.handler.players_read()
        assert not b.runtime.listen.ignores(ALEX.uuid)
    finally:
        await a.runtime.aclose()
        await b.runtime.aclose()


async def test_the_files_of_older_bridges_are_imported_once_and_set_aside(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    config = tmp_path / "config"
    write_config(config, provider.port, COOLDOWNS)
    data = config / DATA_DIR_NAME
    data.mkdir(parents=True)
    shelf = {
        "active": "3",
        "next_id": 5,
        "conversations": [
            {"id": "1", "title": None, "started": "2026-12-01T10:00:00Z", "last_active": None},
            {"id": "3", "title": "Farm", "started": "2026-12-02T10:00:00Z", "last_active": None},
        ],
    }
    (data / "conversations.json").write_text(
        json.dumps({"version": 1, "players": {STEVE.uuid: shelf}})
    )
    (data / "listen-optouts.json").write_text(json.dumps({"version": 1, "players": [ALEX.uuid]}))
    app = await open_app(config, provider)
    try:
        listing = await app.command("ai", "list", player=STEVE)
        assert listing[1].startswith("<white>> 3  Farm"), listing
        assert app.runtime.listen.ignores(ALEX.uuid)
        assert not (data / "conversations.json").exists()
        assert (data / "conversations.json.imported").exists()
        assert (data / "listen-optouts.json.imported").exists()
        assert (await app.command("ai", "new", player=STEVE))[0].startswith(
            "<green>Started conversation 5"
        )
    finally:
        await app.runtime.aclose()
