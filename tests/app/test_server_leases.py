"""Server leases on a real PostgreSQL server: one bridge holds a server at a time; a bridge that
goes away (its connection closed or cut) lets go of all of them and another takes them."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from bridge.app.network.server_leases import (
    CLOSE_REASONS,
    LeaseError,
    LeaseLost,
    LossCause,
    ServerLeases,
    lock_key,
)
from bridge.executors import Pool, executor
from bridge.link.server import SHUTTING_DOWN
from bridge.store.archive import TurnArchive
from bridge.store.database import PostgresDatabase
from tests.postgres_server import PostgresServer
from tests.store.test_postgres_failures import turn

SERVERS = ["default", "lobby", "survival"]
WAIT = 20.0
TTL_S = 1.0


@pytest.fixture
def database(postgres_server: PostgresServer) -> Iterator[str]:
    name = postgres_server.create_database("lease")
    try:
        yield name
    finally:
        postgres_server.drop_database(name)


class Bridge:
    """One bridge's leases, recording the servers it was told it lost, and why."""

    def __init__(self, server: PostgresServer, database: str, name: str) -> None:
        self.lost: asyncio.Queue[str] = asyncio.Queue()
        self.causes: list[tuple[str, LossCause]] = []
        self.leases = ServerLeases(
            server.dsn(database),
            password=server.password,
            servers=lambda: SERVERS,
            on_lost=self._lost,
            poll_s=0.05,
            ttl_s=TTL_S,
            application_name=f"lease-test-{name}",
        )

    async def _lost(self, server_id: str, cause: LossCause) -> None:
        self.causes.append((server_id, cause))
        await self.lost.put(server_id)


@pytest.fixture
async def bridges(
    postgres_server: PostgresServer, database: str
) -> AsyncIterator[tuple[Bridge, Bridge]]:
    first, second = (Bridge(postgres_server, database, n) for n in ("a", "b"))
    yield first, second
    await first.leases.close()
    await second.leases.close()


async def _until(condition: Any) -> None:
    async with asyncio.timeout(WAIT):
        while not condition():
            await asyncio.sleep(0.02)


async def test_the_first_bridge_holds_every_server_and_the_second_none(
    bridges: tuple[Bridge, Bridge],
) -> None:
    a, b = bridges
    await a.leases.start()
    assert a.leases.servers_held == set(SERVERS)
    await b.leases.start()
    await b.leases.poll()
    assert b.leases.servers_held == frozenset()
    assert not b.leases.held("lobby") and a.leases.held("lobby")


async def test_a_bridge_that_closes_hands_every_server_to_the_other(
    bridges: tuple[Bridge, Bridge],
) -> None:
    a, b = bridges
    await a.leases.start()
    await b.leases.start()
    await a.leases.close()
    await _until(lambda: b.leases.servers_held == set(SERVERS))


async def test_a_bridge_whose_connection_is_cut_stops_serving_and_the_other_takes_over(
    bridges: tuple[Bridge, Bridge], postgres_server: PostgresServer
) -> None:
    a, b = bridges
    # Bridge a polls only when the test says: its own loop, 50 ms after noticing the cut,
    # reconnects and may take the freed servers back before b's next poll (b polling late under
    # load, the test failed so; with b polling every 0.5 s it failed every time).
    a.leases.poll_s = 3600.0
    await a.leases.start()
    await b.leases.start()
    # The database ends bridge a's lease session, as when its host dies or its network drops.
    with postgres_server.admin() as conn:
        ended = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = 'lease-test-a'"
        ).fetchall()
    assert ended
    await a.leases.poll()  # its next check finds the connection gone
    lost = {await asyncio.wait_for(a.lost.get(), WAIT) for _ in SERVERS}
    assert lost == set(SERVERS) and a.leases.servers_held == frozenset()
    # Said as it is: no other bridge is known to serve them (issue 39 found "another bridge
    # serves this server now" with no other bridge running).
    assert {cause for _, cause in a.causes} == {"database lost"}
    await _until(lambda: b.leases.servers_held == set(SERVERS))
    # Bridge a comes back to the database but finds every server taken.
    await a.leases.poll()
    await a.leases.poll()
    assert a.leases.servers_held == frozenset()


@contextlib.contextmanager
def paused_backend(server: PostgresServer, application_name: str) -> Iterator[None]:
    """The lease connection's backend paused (SIGSTOP), as a hung database process is: its
    kernel keeps the connection open and answers keepalives, and nothing else ever comes."""
    with server.admin() as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (application_name,)
        ).fetchall()
    assert len(rows) == 1, rows
    pid = rows[0][0]
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


async def test_a_standby_whose_lease_backend_hangs_still_takes_over(
    bridges: tuple[Bridge, Bridge], postgres_server: PostgresServer
) -> None:
    # Before the client-side deadline the standby's poll waited on its hung backend for as long
    # as it hung, and the servers the holder let go stayed unserved that long.
    a, b = bridges
    await a.leases.start()
    await b.leases.start()
    with paused_backend(postgres_server, "lease-test-b"):
        await a.leases.close()
        await _until(lambda: b.leases.servers_held == set(SERVERS))


async def test_a_holder_whose_lease_backend_hangs_loses_its_servers_to_the_standby(
    bridges: tuple[Bridge, Bridge], postgres_server: PostgresServer
) -> None:
    # The paused backend keeps its session, and with it its advisory locks: before leases
    # expired, no other bridge could take those servers for as long as it was paused.
    a, b = bridges
    await a.leases.start()
    await b.leases.start()
    with paused_backend(postgres_server, "lease-test-a"):
        lost = {await asyncio.wait_for(a.lost.get(), WAIT) for _ in SERVERS}
        assert lost == set(SERVERS) and a.leases.servers_held == frozenset()
        await _until(lambda: b.leases.servers_held == set(SERVERS))
        assert {b.leases.epoch(server) for server in SERVERS} == {2}


async def test_a_holder_that_stops_renewing_is_fenced_out_of_the_archive(
    bridges: tuple[Bridge, Bridge], postgres_server: PostgresServer, database: str
) -> None:
    # A hung bridge (its poll no longer runs, its session alive) that resumes after another
    # took its server must not commit a turn for it: once in 13 tries a resumed holder did.
    a, b = bridges
    await a.leases.start()
    await b.leases.start()
    archive = TurnArchive(
        PostgresDatabase(postgres_server.dsn(database), password=postgres_server.password)
    )
    try:
        archive.append(turn("while-held"), fence=a.leases.fence("lobby"))
        assert a.leases._task is not None
        a.leases._task.cancel()  # a stops renewing, as a paused process does
        await _until(lambda: b.leases.servers_held == set(SERVERS))
        assert not a.leases.held("lobby")
        # Resumed, a finds its servers taken: "lease lost", not "database lost".
        await a.leases.poll()
        assert sorted(a.causes) == [(server, "lease lost") for server in sorted(SERVERS)]
        with pytest.raises(LeaseLost, match="no longer holds its lease"):
            await asyncio.to_thread(archive.append, turn("after"), fence=a.leases.fence("lobby"))
        archive.append(turn("by-b"), fence=b.leases.fence("lobby"))
        assert [t.turn_id for t in archive.all_turns()] == ["while-held", "by-b"]
    finally:
        archive.close()


async def never_called(server_id: str, cause: str) -> None:
    """A lease that is never taken is never lost."""
    raise AssertionError(f"{server_id} lost: {cause}")


async def test_an_unreachable_database_refuses_the_start(postgres_server: PostgresServer) -> None:
    leases = ServerLeases(
        f"postgresql://nobody@127.0.0.1:{postgres_server.port}/no_such_database",
        password="wrong-password",
        servers=lambda: SERVERS,
        on_lost=never_called,
    )
    with pytest.raises(LeaseError) as caught:
        await leases.start()
    assert "wrong-password" not in str(caught.value)
    assert not leases.held("default")


def test_the_close_reasons_say_what_happened_each_in_its_own_words() -> None:
    reasons = [*CLOSE_REASONS.values(), SHUTTING_DOWN]
    assert [r.split(":")[0] for r in reasons] == ["database lost", "lease lost", "shutting down"]
    assert all(len(r.encode()) <= 123 for r in reasons)  # a WebSocket close reason's limit


def test_lock_keys_are_stable_and_distinct() -> None:
    keys = {lock_key(server) for server in [*SERVERS, "creative", "hub-1", "hub-2"]}
    assert len(keys) == 6
    assert lock_key("lobby") == lock_key("lobby")
    assert all(-(2**63) <= key < 2**63 for key in keys)


async def test_a_lease_renewal_completes_while_every_other_pool_is_full(
    bridges: tuple[Bridge, Bridge],
) -> None:
    """Strangers' work (pages, players, MCP servers) fills the default pool and the web
    lookups' pool; the bridge's store and budget work may fill theirs. A renewal still runs."""
    a, _ = bridges
    await a.leases.start()
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(4))
    release = threading.Event()
    busy: asyncio.Queue[None] = asyncio.Queue()

    def hold() -> None:
        loop.call_soon_threadsafe(busy.put_nowait, None)
        release.wait()

    pools: list[ThreadPoolExecutor | None] = [None] * 4
    for pool in Pool:
        if pool is not Pool.LEASES:
            pools += [executor(pool)] * pool.threads
    held = [loop.run_in_executor(chosen, hold) for chosen in pools]
    try:
        for _ in held:  # every thread of every other pool is taken
            await busy.get()
        renewed_until = a.leases._valid_until
        async with asyncio.timeout(WAIT):  # a hang guard: before, the poll waited for ever
            await a.leases.poll()
        assert a.leases._valid_until > renewed_until
        assert a.leases.servers_held == set(SERVERS)
    finally:
        release.set()
        await asyncio.gather(*held)
