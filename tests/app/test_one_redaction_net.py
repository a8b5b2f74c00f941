"""One net for secrets: planted in what players say, in what the model answers (split across
stream chunks) and in a compaction summary, none of them, whole or by a long run, reaches a
provider request, a chat line, an action-bar frame, a table or a file the bridge wrote.

The secrets: a four-word passphrase and a token with ``/ + = @`` from ``.env``, and a quoted
multi-word value of the built-in ``secret`` rule."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from bridge.redaction.secret_runs import normal

from .conftest import WAIT, App, open_app, rendered, write_config
from .scripted_provider import ScriptedProvider

PASSPHRASE = "purple monkey dishwasher quartz"
TOKEN = "Ab/cd+ef=gh@ij-98765zz"
QUOTED = "my secret phrase here"


def runs(secret: str, length: int = 12) -> set[str]:
    secret = normal(secret)
    return {secret[i : i + length] for i in range(len(secret) - length + 1)}


PLANTED = runs(PASSPHRASE) | runs(TOKEN) | {"secret phrase", "phrase here", "monkey dish"}


def leaks(text: str) -> set[str]:
    flat = normal(text)
    return {piece for piece in PLANTED if piece in flat}


def every_row(database: Path) -> str:
    """Every row of every table of a SQLite file, as text."""
    found: list[str] = []
    with sqlite3.connect(database) as connection:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master")]
        for table in tables:
            try:
                rows = connection.execute(f'SELECT * FROM "{table}"').fetchall()
            except sqlite3.Error:  # an index, not a table
                continue
            found.extend(repr(row) for row in rows)
    return "\n".join(found)


async def compacted(app: App) -> None:
    assert "Compacting" in (await app.command("compact"))[0]
    await app.link.wait_for(
        lambda name, data: name == "output.chat" and "ompact" in rendered(data.text)
    )
    running = app.runtime.compactor.running
    if running is not None:
        await asyncio.wait_for(asyncio.shield(running), WAIT)


@pytest.mark.sqlite_only  # every table is read from the SQLite files the bridge wrote
async def test_planted_secrets_reach_no_provider_request_and_no_sink(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    config = tmp_path / "config"
    cooldowns = "rate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
    write_config(config, provider.port, "schema: 1\n" + cooldowns)
    (config / ".env").write_text(f"RCON_PASSWORD={PASSPHRASE}\nBOT_TOKEN={TOKEN}\n")
    (config / ".env").chmod(0o600)
    before = {path: path.stat().st_mtime_ns for path in config.rglob("*") if path.is_file()}
    app = await open_app(config, provider)
    try:
        # Three turns: the secrets in the question, in the answer (split across chunks), the
        # token's tail and a run of three words; then a compaction whose summary holds both.
        provider.answer("Noted: purple monk", "ey dishwasher quartz is safe.")
        provider.answer("The token ends in cd+ef=g", "h@ij-98765zz, as you said.")
        provider.answer(f'I keep secret: "{QUOTED}" too.')
        provider.answer(f"Summary: {PASSPHRASE}; token {TOKEN}; secret: '{QUOTED}'.")
        provider.answer("Still here.")
        questions = [
            "@ai remember purple monkey dishwasher for me",
            "@ai the bot token tail is ef=gh@ij-98765zz",
            f'@ai and secret: "{QUOTED}" please',
        ]
        for question in questions:
            assert (await app.chat(question)).decision == "accept"
            await app.turn_done()
        await compacted(app)
        assert app.runtime.session.state.summary is not None
        assert (await app.chat("@ai what do you remember?")).decision == "accept"
        await app.turn_done()
        assert len(provider.requests) == 5

        for request in provider.requests:
            body = request.body.decode("utf-8")
            assert not leaks(body), body
            assert not leaks(json.dumps(request.json(), ensure_ascii=False))
        # Every frame sent to the plugin: chat lines, action-bar frames, prompts.
        frames = [json.dumps(data.model_dump(mode="json")) for _, data in app.link.sent]
        assert frames and not any(leaks(frame) for frame in frames), frames
        runtime = app.runtime
    finally:
        await app.runtime.aclose()
    runtime.audit.flush()

    written = [
        path
        for path in config.rglob("*")
        if path.is_file() and before.get(path) != path.stat().st_mtime_ns
    ]
    databases = [path for path in written if path.name.endswith(".sqlite3")]
    assert databases and any(path.name == "usage.sqlite3" for path in databases)
    for path in written:
        assert not leaks(path.read_bytes().decode("utf-8", "replace")), path
    for database in databases:
        assert not leaks(every_row(database)), database
