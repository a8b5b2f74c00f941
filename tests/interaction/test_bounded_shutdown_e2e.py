"""SIGTERM of a bridge whose database hangs mid-turn, end to end on the tests' own PostgreSQL:
every backend of the bridge's database paused (SIGSTOP) while a turn streams.

Each database operation has its own deadline, but the shutdown is a series of them (the stopped
turn, the audit log's last batch, the lease connection, connections opened anew), and while the
process lives it keeps its sessions and the leases of its servers (issue 39: still alive 40 s
after SIGTERM). Now the whole shutdown is bounded by ``storage.stop_wait_s``: past it the
process says so and exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest
from app.scripted_provider import ScriptedProvider

from tests.postgres_server import PostgresServer

from .processes import BridgeProcess, TestkitProcess, free_port, require_testkit_jar
from .test_network_e2e import Server
from .test_takeover_e2e import _config
from .test_turns_e2e import OP

pytestmark = pytest.mark.jvm

WAIT = 60.0


async def test_sigterm_exits_at_the_bound_while_every_backend_of_its_database_hangs(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    require_testkit_jar()
    provider = ScriptedProvider()
    await provider.start()
    database = postgres_server.create_database("bound")
    bridge: BridgeProcess | None = None
    testkit: TestkitProcess | None = None
    paused: list[int] = []
    try:
        folder = tmp_path / "a"
        _config(folder, provider, postgres_server.dsn(database), postgres_server.password)
        with (folder / "config.yml").open("a") as config:  # storage is its last section
            config.write("  stop_wait_s: 1\n")
        bridge = await BridgeProcess.start(folder, port=free_port())
        await bridge.stdout.wait_for(r"^server leases \(PostgreSQL\) held: default", timeout=WAIT)
        testkit = await TestkitProcess.start(bridge.url, bridge.token_file)
        await testkit.wait_event(lambda e: e.get("event") == "link.up")
        world = Server("default", testkit)
        await world.add("Steve", OP)
        held = provider.held("Never ", "shown.")
        assert (await world.chat("Steve", "@ai a long one"))["outcome"] == "public"
        await held.streaming.wait()

        with postgres_server.admin() as conn:
            rows = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s", (database,)
            ).fetchall()
        assert rows
        for (pid,) in rows:
            os.kill(pid, signal.SIGSTOP)
            paused.append(pid)

        assert await bridge.interrupt(signal.SIGTERM) == 1
        assert "the shutdown took longer than 1 s (storage.stop_wait_s)" in bridge.stderr.tail(200)
        held.release.set()
    finally:
        for pid in paused:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        if testkit is not None:
            await testkit.shutdown()
        if bridge is not None:
            await bridge.kill()
        await provider.stop()
        postgres_server.drop_database(database)
