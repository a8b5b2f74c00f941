"""``mineclaw-bridge serve`` with the application: a bad wake pattern, an archive a newer bridge
migrated or a database that cannot be reached stops the start with one clear line."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
from pathlib import Path

import pytest

from tests.storage_choice import apply_chosen_storage

from .serve_process import start_serve


async def serve_refusal(config: Path, *, code: int = 1) -> bytes:
    apply_chosen_storage(config)
    process = await start_serve(config)
    stdout, stderr = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == code, (stdout, stderr)
    assert b"listening on" not in stdout
    return stderr


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [("x*", "matches an empty message"), ("(open", "wake_pattern")],
)
async def test_serve_refuses_a_wake_pattern_that_would_wake_on_everything_or_not_compile(
    tmp_path: Path, pattern: str, reason: str
) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.yml").write_text(f'schema: 1\nchat:\n  wake_pattern: "{pattern}"\n')
    stderr = await serve_refusal(config)
    assert b"wake_pattern" in stderr and reason.encode() in stderr


@pytest.mark.sqlite_only  # the schema version it forges is the SQLite file's user_version
async def test_serve_refuses_an_archive_a_newer_bridge_migrated(tmp_path: Path) -> None:
    config = tmp_path / "config"
    (config / "data").mkdir(parents=True)
    (config / "config.yml").write_text("schema: 1\n")
    with sqlite3.connect(config / "data" / "archive.sqlite3") as conn:
        conn.execute("PRAGMA user_version=9")
    stderr = await serve_refusal(config)
    assert b"archive schema is at version 9, newer than this bridge knows" in stderr


async def test_serve_refuses_a_postgresql_dsn_that_reaches_nothing(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.yml").write_text(
        "schema: 1\nstorage:\n  backend: postgresql\n"
        f"  dsn: postgresql://mc@127.0.0.1:{port}/mc\n  password: ${{MC_PW}}\n"
        "  start_wait_s: 0\n"  # tried once; waiting is tests/app/test_storage_wait.py
    )
    (config / ".env").write_text("MC_PW=Pw-never-shown-7731\n")
    (config / ".env").chmod(0o600)
    stderr = await serve_refusal(config, code=3)
    assert b"storage.dsn" in stderr and f"127.0.0.1:{port}/mc".encode() in stderr
    assert b"Pw-never-shown-7731" not in stderr
