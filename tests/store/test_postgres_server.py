"""The test suite's PostgreSQL launcher: where it finds the server's programs, and the message
that fails the PostgreSQL tests on a machine without them (never a skip)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests import postgres_server
from tests.postgres_server import PostgresUnavailable, find_bin_dir, start_postgres


def test_the_programs_are_found_off_path_in_the_distribution_layout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Debian's package puts initdb and pg_ctl in /usr/lib/postgresql/<version>/bin only.
    monkeypatch.setenv("PATH", "/nonexistent")
    found = find_bin_dir()
    assert found is not None and found.parent.parent == Path("/usr/lib/postgresql")
    assert (found / "initdb").exists() and (found / "pg_ctl").exists()


def test_without_postgresql_the_tests_fail_naming_make_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(postgres_server, "find_bin_dir", lambda: None)
    with pytest.raises(PostgresUnavailable, match="PostgreSQL is not installed") as caught:
        start_postgres()
    assert "make install" in str(caught.value)


def test_a_failing_initdb_is_reported_with_its_output_and_nothing_is_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Readable by the unprivileged user the programs run as under root (pytest's own temporary
    # folders are private to root).
    fake = Path(tempfile.mkdtemp(prefix="mineclaw-fake-pg-"))
    fake.chmod(0o755)
    for name in ("initdb", "pg_ctl", "postgres"):
        program = fake / name
        program.write_text("#!/bin/sh\necho 'initdb: cannot be run as this user' >&2\nexit 1\n")
        program.chmod(0o755)
    monkeypatch.setattr(postgres_server, "find_bin_dir", lambda: fake)
    made: list[str] = []
    real_mkdtemp = tempfile.mkdtemp

    def recording_mkdtemp(prefix: str) -> str:
        made.append(real_mkdtemp(prefix=prefix))
        return made[-1]

    monkeypatch.setattr(postgres_server.tempfile, "mkdtemp", recording_mkdtemp)
    with pytest.raises(PostgresUnavailable, match="cannot be run as this user"):
        start_postgres()
    assert len(made) == 1 and not Path(made[0]).exists()
    shutil.rmtree(fake)
