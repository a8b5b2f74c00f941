"""Suite-wide fixtures."""

from __future__ import annotations

import asyncio
import inspect
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.store.target import StorageTarget
from tests.postgres_server import INSTALL_HINT, PostgresServer, PostgresUnavailable, start_postgres
from tests.storage_backends import Backend
from tests.storage_choice import SQLITE_ONLY, PostgresStorage, set_current


@pytest.fixture(autouse=True)
def _no_idle_current_loop(request: pytest.FixtureRequest) -> Iterator[None]:
    """Before a synchronous test, close the idle loop pytest-asyncio leaves as "current".

    After each async test pytest-asyncio installs a fresh, never-used loop as the current one.
    A synchronous test that calls ``asyncio.run`` (the CLI commands do) unsets the current loop
    at its end, so that fresh loop is dropped unclosed and its ResourceWarning, an error in this
    suite, surfaces in whichever test happens to run the garbage collector.
    """
    if not inspect.iscoroutinefunction(request.function):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                loop: asyncio.AbstractEventLoop | None = (
                    asyncio.get_event_loop_policy().get_event_loop()
                )
            except RuntimeError:
                loop = None
        if loop is not None and not loop.is_running() and not loop.is_closed():
            loop.close()
            asyncio.set_event_loop(None)
    yield


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--storage",
        choices=("sqlite", "postgresql"),
        default="sqlite",
        help="the storage backend of the config folders the app and end-to-end tests make "
        "(tests/storage_choice.py); the store suites run on both either way",
    )


@pytest.fixture(autouse=True)
def _chosen_storage(request: pytest.FixtureRequest) -> Iterator[None]:
    """With ``--storage=postgresql``, config folders made in this test get a fresh database."""
    if (
        request.config.getoption("storage") != "postgresql"
        or request.node.get_closest_marker(SQLITE_ONLY) is not None
    ):
        yield
        return
    storage = PostgresStorage(request.getfixturevalue("postgres_server"))
    set_current(storage)
    try:
        yield
    finally:
        set_current(None)
        storage.drop()


@pytest.fixture
def chosen_target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StorageTarget]:
    """The run's storage backend (``--storage``) for a test that opens stores itself: SQLite
    files in ``tmp_path / "data"``, or a fresh database on the session's PostgreSQL server."""
    data_dir = tmp_path / "data"
    if request.config.getoption("storage") != "postgresql":
        yield StorageTarget(data_dir)
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    dbname = server.create_database()
    try:
        yield StorageTarget(
            data_dir, backend="postgresql", dsn=server.dsn(dbname), password=server.password
        )
    finally:
        server.drop_database(dbname)


@pytest.fixture
def postgres_only(tmp_path: Path, postgres_server: PostgresServer) -> Iterator[Backend]:
    """A new database on the session's PostgreSQL server alone (dropped afterwards)."""
    name = postgres_server.create_database()
    target = StorageTarget(
        tmp_path / "data",
        backend="postgresql",
        dsn=postgres_server.dsn(name),
        password=postgres_server.password,
    )
    yield Backend(target, postgres_server, name)
    postgres_server.drop_database(name)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the whole run, on loopback, in a temporary folder.

    Never skipped: a machine without PostgreSQL fails these tests, naming the fix."""
    try:
        server = start_postgres()
    except PostgresUnavailable as exc:
        pytest.fail(f"the PostgreSQL tests need a PostgreSQL server: {exc}\n{INSTALL_HINT}")
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """The test runs once per storage backend: SQLite files in ``tmp_path / "data"``, then a
    new database on the session's PostgreSQL server (dropped afterwards)."""
    data_dir = tmp_path / "data"
    if request.param == "sqlite":
        yield Backend(StorageTarget(data_dir))
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    dbname = server.create_database()
    target = StorageTarget(
        data_dir, backend="postgresql", dsn=server.dsn(dbname), password=server.password
    )
    try:
        yield Backend(target, server, dbname)
    finally:
        server.drop_database(dbname)
