"""``serve`` started before its database: it waits, a line per attempt, and serves once the
database answers; a refusal is final at once; ``storage.start_wait_s`` bounds the wait."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bridge.cli.storage_wait import StorageNotReady, open_waiting_for_storage, pause_before
from bridge.control import init_config_dir
from bridge.errors import StoreError
from bridge.store.database import DatabaseError, DatabaseUnreachable
from tests.postgres_server import BRIDGE_ROLE, PostgresServer

from .serve_process import start_serve

BOUND_S = 180.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _postgres_folder(tmp_path: Path, port: int, dbname: str, password: str, wait_s: int) -> Path:
    config = tmp_path / "config"
    init_config_dir(config)
    (config / "config.yml").write_text(
        "schema: 1\nstorage:\n  backend: postgresql\n"
        f"  dsn: postgresql://{BRIDGE_ROLE}@127.0.0.1:{port}/{dbname}\n"
        f"  password: ${{MC_PW}}\n  start_wait_s: {wait_s}\n"
    )
    (config / ".env").write_text(f"MC_PW={password}\n")
    (config / ".env").chmod(0o600)
    return config


@contextlib.asynccontextmanager
async def _forwarder(port: int, target_port: int) -> AsyncIterator[None]:
    """A loopback TCP relay on ``port`` to the real server: the database "comes up"."""

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target_port)
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    server = await asyncio.start_server(relay, "127.0.0.1", port)
    try:
        yield
    finally:
        server.close()


async def test_serve_waits_for_a_database_that_answers_later(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    dbname = postgres_server.create_database("wait")
    port = _free_port()
    config = _postgres_folder(tmp_path, port, dbname, postgres_server.password, wait_s=3600)
    process = await start_serve(config)
    assert process.stdout is not None and process.stderr is not None
    errors: list[bytes] = []
    try:

        async def first_attempt_reported() -> None:
            assert process.stderr is not None
            while b"storage not reachable yet (attempt 1)" not in (
                line := await process.stderr.readline()
            ):
                assert line, b"".join(errors)
                errors.append(line)
            errors.append(line)

        await asyncio.wait_for(first_attempt_reported(), BOUND_S)
        async with _forwarder(port, postgres_server.port):

            async def listening() -> None:
                assert process.stdout is not None
                while not (line := await process.stdout.readline()).startswith(b"listening on"):
                    assert line, b"".join(errors)

            await asyncio.wait_for(listening(), BOUND_S)
            process.send_signal(signal.SIGTERM)
            _, rest = await asyncio.wait_for(process.communicate(), BOUND_S)
        assert process.returncode == 0
        text = b"".join(errors) + rest
        assert f"127.0.0.1:{port}".encode() in text and b"storage.start_wait_s" in text
        assert postgres_server.password.encode() not in text
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        postgres_server.drop_database(dbname)


async def test_a_database_that_refuses_the_bridge_is_not_waited_for(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    dbname = postgres_server.create_database("refuse")
    config = _postgres_folder(tmp_path, postgres_server.port, dbname, "wrong-password-1", 3600)
    try:
        process = await start_serve(config)
        stdout, stderr = await asyncio.wait_for(process.communicate(), BOUND_S)
        assert process.returncode == 1, (stdout, stderr)
        assert b"password authentication failed" in stderr and b"attempt" not in stderr
    finally:
        postgres_server.drop_database(dbname)


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.pauses: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


def _unreachable() -> StoreError:
    try:
        raise DatabaseUnreachable("cannot connect to PostgreSQL at db:5432/mc: refused")
    except DatabaseUnreachable as inner:
        try:
            raise StoreError(f"cannot open the turn archive: {inner}") from inner
        except StoreError as outer:
            return outer


def test_the_pause_grows_to_thirty_seconds_and_the_wait_is_bounded(tmp_path: Path) -> None:
    config = tmp_path / "config"
    init_config_dir(config)
    (config / "config.yml").write_text("schema: 1\nstorage:\n  start_wait_s: 100\n")
    clock, lines = _Clock(), []

    def never() -> None:
        raise _unreachable()

    with pytest.raises(StorageNotReady, match=r"gave up after 8 attempt\(s\) in 91 s"):
        open_waiting_for_storage(
            never, config, say=lines.append, sleep=clock.sleep, clock=lambda: clock.now
        )
    assert clock.pauses == [1, 2, 4, 8, 16, 30, 30]
    assert [pause_before(n) for n in (1, 6, 60)] == [1, 30, 30]
    assert len(lines) == 7 and "(attempt 3)" in lines[2] and "trying again in 4 s" in lines[2]


def test_a_start_that_opens_on_the_third_attempt_returns_it(tmp_path: Path) -> None:
    config = tmp_path / "config"
    init_config_dir(config)
    clock, lines, attempts = _Clock(), [], []

    def third_time() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise _unreachable()
        return "opened"

    opened = open_waiting_for_storage(
        third_time, config, say=lines.append, sleep=clock.sleep, clock=lambda: clock.now
    )
    assert opened == "opened" and clock.pauses == [1, 2] and len(lines) == 2


def test_zero_tries_once_and_a_refusal_passes_at_once(tmp_path: Path) -> None:
    config = tmp_path / "config"
    init_config_dir(config)
    (config / "config.yml").write_text("schema: 1\nstorage:\n  start_wait_s: 0\n")
    clock = _Clock()

    def never() -> None:
        raise _unreachable()

    def refused() -> None:
        raise DatabaseError("cannot connect: password authentication failed")

    with pytest.raises(StorageNotReady, match=r"1 attempt\(s\)"):
        open_waiting_for_storage(never, config, say=print, sleep=clock.sleep, clock=lambda: 0)
    with pytest.raises(DatabaseError, match="password"):
        open_waiting_for_storage(refused, config, say=print, sleep=clock.sleep, clock=lambda: 0)
    assert clock.pauses == []
