"""The bridge holding a server hangs, end to end on one real PostgreSQL database: two
``python -m bridge serve`` processes, a testkit server listing both, and the holder paused with
SIGSTOP in the middle of a turn, then resumed.

A paused bridge keeps its database session, and with it the session's advisory locks, so before
leases expired the standby never took the server; and the plugin, seeing an open connection,
stayed on the paused bridge (issue 39). Now: the plugin gives the silent bridge up, the lease
expires and the standby takes it (epoch 2), the server is served again; and the turn the
paused bridge was running is not archived when it resumes (the archive would hold an answer
nobody saw).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from app.scripted_provider import ScriptedProvider

from bench.link_proxy import LinkProxy
from tests.postgres_server import PostgresServer

from .processes import BridgeProcess, TestkitProcess, free_port, require_testkit_jar
from .test_network_e2e import Server
from .test_takeover_e2e import TOKENS, _archived, _config
from .test_turns_e2e import OP

pytestmark = pytest.mark.jvm

WAIT = 60.0


@contextlib.asynccontextmanager
async def holder_and_standby(
    tmp_path: Path, postgres_server: PostgresServer, *, front: list[LinkProxy] | None = None
) -> AsyncIterator[tuple[BridgeProcess, BridgeProcess, Server, ScriptedProvider, str]]:
    """Two bridges on one database, the first holding every server, and a lobby listing both.
    ``front``: the plugin reaches the holder through a `LinkProxy`, appended to it."""
    require_testkit_jar()
    provider = ScriptedProvider()
    await provider.start()
    database = postgres_server.create_database("hung")
    dsn = postgres_server.dsn(database)
    running: list[BridgeProcess] = []
    testkit: TestkitProcess | None = None
    try:
        for name in ("a", "b"):
            _config(tmp_path / name, provider, dsn, postgres_server.password)
        first = await BridgeProcess.start(tmp_path / "a", port=free_port())
        running.append(first)
        await first.stdout.wait_for(r"^server leases \(PostgreSQL\) held: default, ", timeout=WAIT)
        second = await BridgeProcess.start(tmp_path / "b", port=free_port())
        running.append(second)
        await second.stdout.wait_for(r"^server leases \(PostgreSQL\) held: none yet$", timeout=WAIT)
        first_url = first.url
        if front is not None:
            proxy = LinkProxy(first.url)
            await proxy.start()
            front.append(proxy)
            first_url = proxy.url
        testkit = await TestkitProcess.start(
            first_url,
            first.token_file,
            *("--url", second.url, "--token", TOKENS["lobby"], "--server-id", "lobby"),
            *("--link-timeout-ms", "2000"),
        )
        await testkit.wait_event(lambda e: e.get("event") == "link.up")
        yield first, second, Server("lobby", testkit), provider, database
    finally:
        for bridge in running:
            with contextlib.suppress(ProcessLookupError):
                bridge.process.send_signal(signal.SIGCONT)
        if testkit is not None:
            await testkit.shutdown()
        for bridge in running:
            await bridge.kill()
        for proxy in front or ():
            await proxy.close()
        await provider.stop()
        postgres_server.drop_database(database)


async def test_a_paused_holder_loses_its_server_and_its_late_turn_is_not_archived(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    async with holder_and_standby(tmp_path, postgres_server) as (
        first,
        second,
        lobby,
        provider,
        db,
    ):
        await lobby.add("Steve", OP)
        provider.answer("Before the pause.")
        since = lobby.mark()
        assert (await lobby.chat("Steve", "@ai lobby first"))["outcome"] == "public"
        await lobby.message("*", "Before the pause.", since)

        held = provider.held("Late ", "answer.")
        assert (await lobby.chat("Steve", "@ai lobby cut"))["outcome"] == "public"
        await held.streaming.wait()
        provider.answer("The question sent again.")  # the plugin kept it (protocol 1.5)
        since = lobby.mark()
        first.process.send_signal(signal.SIGSTOP)

        # The plugin gives the silent bridge up; the lease expires; the standby serves, and
        # answers the question the plugin sends again.
        await lobby.testkit.wait_event(
            lambda e: e.get("event") == "link.up", since=since, timeout=WAIT
        )
        await second.stderr.wait_for(r"server lobby: lease taken \(epoch 2\)", timeout=WAIT)
        await lobby.message("*", "The question sent again.", since)
        provider.answer("While the holder is paused.")
        since = lobby.mark()
        assert (await lobby.chat("Steve", "@ai lobby third"))["outcome"] == "public"
        await lobby.message("*", "While the holder is paused.", since)

        # The paused holder resumes and finishes its turn: refused by the fence.
        held.release.set()
        first.process.send_signal(signal.SIGCONT)
        # It finds its leases gone at its first poll and stops the turn with the server's
        # context; a turn that completes before that poll is refused by the archive's fence
        # (tests/app/test_server_leases.py). Either way the late answer is not archived.
        await first.stderr.wait_for(r"server leases lost \(another bridge took them", timeout=WAIT)
        await first.stderr.wait_for(r"server lobby: context retired", timeout=WAIT)

        asked = [text for _, texts in _archived(postgres_server, db) for text in texts]
        assert sum("lobby first" in t for t in asked) == 1, asked
        assert sum("lobby third" in t for t in asked) == 1, asked
        # Once: the standby's answer; the paused holder's late one is not there.
        assert sum("lobby cut" in t for t in asked) == 1, asked


async def test_sigterm_exits_although_the_lease_backend_hangs_and_the_standby_takes_over(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    # Before the lease poll had a deadline, a bridge stopped with SIGTERM while its lease
    # backend hung stayed alive, holding every server, until it was killed.
    async with holder_and_standby(tmp_path, postgres_server) as (first, second, lobby, _, db):
        with postgres_server.admin() as conn:
            rows = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s"
                " AND application_name = 'mineclaw-bridge-leases' ORDER BY backend_start",
                (db,),
            ).fetchall()
        holder_lease = int(rows[0][0])  # the holder started first
        os.kill(holder_lease, signal.SIGSTOP)
        try:
            since = lobby.mark()
            assert await first.interrupt(signal.SIGTERM) == 0
            down = await lobby.testkit.wait_event(
                lambda e: e.get("event") == "link.down", since=since, timeout=WAIT
            )
            # The plugin's log says the bridge stopped (not a lost database or lease).
            assert "shutting down: this bridge is stopping" in down["reason"], down
            await second.stderr.wait_for(r"server lobby: lease taken", timeout=WAIT)
            await lobby.testkit.wait_event(
                lambda e: e.get("event") == "link.up", since=since, timeout=WAIT
            )
        finally:
            os.kill(holder_lease, signal.SIGCONT)
