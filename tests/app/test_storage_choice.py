"""The ``--storage=postgresql`` pass (tests/storage_choice.py) really moves a config folder's
stores to PostgreSQL, and leaves alone a folder that names its own storage or is broken."""

from __future__ import annotations

from pathlib import Path

import yaml

from bridge.app.wiring.runtime import Runtime
from tests.postgres_server import PostgresServer
from tests.storage_choice import PASSWORD_VARIABLE, PostgresStorage

from .conftest import NO_COOLDOWNS, write_config
from .scripted_provider import ScriptedProvider


async def test_a_folder_gets_a_fresh_database_and_the_password_in_env(
    tmp_path: Path, provider: ScriptedProvider, postgres_server: PostgresServer
) -> None:
    config = tmp_path / "config"
    write_config(config, provider.port)
    storage = PostgresStorage(postgres_server)
    storage.apply(config)
    storage.apply(config)  # a restart of the same folder keeps its database
    try:
        (name,) = storage.databases
        section = yaml.safe_load((config / "config.yml").read_text())["storage"]
        assert section["backend"] == "postgresql" and section["dsn"].endswith(f"/{name}")
        env = (config / ".env").read_text()
        assert env == f"{PASSWORD_VARIABLE}={postgres_server.password}\n"
        assert (config / ".env").stat().st_mode & 0o077 == 0
        runtime = Runtime.open(config, environ={})
        try:
            assert runtime.archive.all_turns() == []
        finally:
            await runtime.aclose()
        with postgres_server.admin(name) as conn:
            assert conn.execute("SELECT count(*) FROM turns").fetchone() == (0,)
        assert not (config / "data" / "archive.sqlite3").exists()
    finally:
        storage.drop()


def test_a_folder_naming_its_storage_or_broken_is_left_as_written(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    storage = PostgresStorage(postgres_server)
    own = tmp_path / "own"
    own.mkdir()
    text = NO_COOLDOWNS + "storage:\n  backend: sqlite\n"
    (own / "config.yml").write_text(text)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.yml").write_text("link: [\n")
    storage.apply(own)
    storage.apply(broken)
    assert (own / "config.yml").read_text() == text
    assert (broken / "config.yml").read_text() == "link: [\n"
    assert storage.databases == [] and not (own / ".env").exists()
