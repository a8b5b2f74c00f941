"""The application on PostgreSQL storage: ``config.yml`` names the database, ``.env`` holds
the password, a turn is archived and audited there (not in local SQLite files), a connection
cut between turns costs no turn, and a DSN that reaches nothing stops the start naming the
setting."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bridge.app.wiring.runtime import Runtime
from bridge.errors import StoreError
from tests.postgres_server import PostgresServer

from .conftest import NO_COOLDOWNS, App, open_app, write_config
from .scripted_provider import ScriptedProvider


def storage_yml(dsn: str) -> str:
    return (
        NO_COOLDOWNS
        + f"storage:\n  backend: postgresql\n  dsn: {dsn}\n  password: ${{MC_DB_PASSWORD}}\n"
    )


def set_password(config: Path, password: str) -> None:
    (config / ".env").write_text(f"MC_DB_PASSWORD={password}\n")
    (config / ".env").chmod(0o600)


@pytest.fixture
async def pg_app(
    tmp_path: Path, provider: ScriptedProvider, postgres_server: PostgresServer
) -> AsyncIterator[tuple[App, str]]:
    name = postgres_server.create_database()
    config = tmp_path / "config"
    write_config(config, provider.port, storage_yml(postgres_server.dsn(name)))
    set_password(config, postgres_server.password)
    opened = await open_app(config, provider)
    yield opened, name
    await opened.runtime.aclose()
    postgres_server.drop_database(name)


async def test_a_turn_is_archived_and_audited_in_postgresql(
    pg_app: tuple[App, str], postgres_server: PostgresServer
) -> None:
    app, name = pg_app
    app.provider.answer("Hello from the database")
    await app.chat("@ai hi")
    await app.turn_done()
    assert [t.player for t in app.runtime.archive.all_turns()] == ["Steve"]
    with postgres_server.admin(name) as conn:
        assert conn.execute("SELECT player FROM turns").fetchall() == [("Steve",)]
    app.runtime.audit.flush()
    with postgres_server.admin(name) as conn:
        kinds = {row[0] for row in conn.execute("SELECT kind FROM audit_events").fetchall()}
    assert {"turn.start", "turn.end"} <= kinds
    data = app.config / "data"
    assert not (data / "archive.sqlite3").exists() and not (data / "audit.sqlite3").exists()


async def test_a_connection_cut_between_turns_costs_no_turn(
    pg_app: tuple[App, str], postgres_server: PostgresServer
) -> None:
    app, name = pg_app
    app.provider.answer("one")
    await app.chat("@ai first")
    await app.turn_done()
    assert postgres_server.terminate_connections(name) >= 1
    app.provider.answer("two")
    await app.chat("@ai second")
    await app.turn_done()
    assert [len(t.items) > 0 for t in app.runtime.archive.all_turns()] == [True, True]
    assert len(app.runtime.session.state.turns) == 2


async def test_a_dsn_that_reaches_nothing_stops_the_start_naming_the_setting(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = tmp_path / "config"
    write_config(config, provider.port, storage_yml(f"postgresql://mc@127.0.0.1:{port}/mc"))
    set_password(config, "Secret-Pw-4431")
    with pytest.raises(StoreError) as caught:
        Runtime.open(config, environ={})
    message = str(caught.value)
    assert message.startswith("config.yml: storage.dsn (backend postgresql): ")
    assert f"127.0.0.1:{port}" in message and "Secret-Pw-4431" not in message
