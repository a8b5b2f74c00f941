"""A bridge that loses its database mid-turn, end to end on the tests' own PostgreSQL: one
``python -m bridge serve`` process and a testkit server; the bridge's lease session is ended by
the database while a turn streams.

Before (issue 39): the link was dropped with "another bridge serves this server now" although
there was no other bridge, the default server's turn streamed on to its end, and its asker was
told nothing. Now the close reason says the database was lost, the turn stops, and once the
bridge holds the server again and the plugin relinks, the question is answered: the plugin kept
it and sends it again (protocol 1.5, asks), and the bridge owes no failure line for it (a
plugin without that feature gets the line).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from app.scripted_provider import HeldReply, ScriptedProvider

from tests.postgres_server import PostgresServer

from .processes import BridgeProcess, TestkitProcess, free_port, require_testkit_jar
from .test_network_e2e import Server
from .test_takeover_e2e import _config, two_bridges
from .test_turns_e2e import OP

pytestmark = pytest.mark.jvm

WAIT = 60.0


@dataclass
class MidTurn:
    """One bridge on its own database, a testkit server linked to it, Steve's turn streaming."""

    bridge: BridgeProcess
    world: Server
    held: HeldReply
    database: str
    provider: ScriptedProvider


@contextlib.asynccontextmanager
async def bridge_mid_turn(
    folder: Path, postgres_server: PostgresServer, storage_extra: str = ""
) -> AsyncIterator[MidTurn]:
    """``storage_extra``: lines added to config.yml's storage section (its last)."""
    require_testkit_jar()
    provider = ScriptedProvider()
    await provider.start()
    database = postgres_server.create_database("cut")
    bridge: BridgeProcess | None = None
    testkit: TestkitProcess | None = None
    held: HeldReply | None = None
    try:
        _config(folder, provider, postgres_server.dsn(database), postgres_server.password)
        with (folder / "config.yml").open("a") as config:
            config.write(storage_extra)
        bridge = await BridgeProcess.start(folder, port=free_port())
        await bridge.stdout.wait_for(r"^server leases \(PostgreSQL\) held: default", timeout=WAIT)
        testkit = await TestkitProcess.start(
            bridge.url, bridge.token_file, "--link-timeout-ms", "2000"
        )
        await testkit.wait_event(lambda e: e.get("event") == "link.up")
        world = Server("default", testkit)
        await world.add("Steve", OP)
        held = provider.held("Never ", "shown.")
        assert (await world.chat("Steve", "@ai a long one"))["outcome"] == "public"
        await held.streaming.wait()
        yield MidTurn(bridge, world, held, database, provider)
    finally:
        if held is not None:
            held.release.set()
        if testkit is not None:
            await testkit.shutdown()
        if bridge is not None:
            await bridge.kill()
        await provider.stop()
        postgres_server.drop_database(database)


async def test_a_turn_cut_by_a_lost_database_stops_and_its_question_is_answered_on_relink(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    async with bridge_mid_turn(tmp_path / "a", postgres_server) as cut:
        cut.provider.answer("Answered after the cut.")
        since = cut.world.mark()
        with postgres_server.admin() as conn:  # as when the database restarts or cuts us off
            ended = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s"
                " AND application_name = 'mineclaw-bridge-leases'",
                (cut.database,),
            ).fetchall()
        assert ended

        testkit = cut.world.testkit
        down = await testkit.wait_event(
            lambda e: e.get("event") == "link.down", since=since, timeout=WAIT
        )
        assert "database lost" in down["reason"], down
        await cut.bridge.stderr.wait_for(r"stopped \(the bridge lost its database\)", timeout=WAIT)
        await cut.bridge.stderr.wait_for(r"the plugin sends the question again", timeout=WAIT)
        # The bridge reaches its database again, takes the free lease, the plugin relinks and
        # sends the question again: answered once, and nobody told it failed.
        await testkit.wait_event(lambda e: e.get("event") == "link.up", since=since, timeout=WAIT)
        await cut.world.message("*", "Answered after the cut.", since)
        lines = [e.get("text", "") for e in testkit.events[since:] if e.get("event") == "message"]
        assert sum("Answered after the cut." in line for line in lines) == 1, lines
        assert not any("lost its database" in line for line in lines), lines


async def test_a_cut_turns_question_is_answered_by_the_bridge_the_server_links_to_next(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    # Issue 50: the line was kept in the cutting bridge's memory, so a plugin that moved on to
    # another bridge (or a bridge that exited first) left its asker in silence. Now the plugin
    # keeps the question and sends it again to the next bridge, which answers it.
    async with two_bridges(tmp_path, postgres_server) as (first, second, servers, provider, db):
        lobby = servers["lobby"]
        await lobby.add("Steve", OP)
        held = provider.held("Never ", "shown.")
        provider.answer("Answered by the next bridge.")
        assert (await lobby.chat("Steve", "@ai a long one"))["outcome"] == "public"
        await held.streaming.wait()
        since = lobby.mark()
        with postgres_server.admin() as conn:  # the first bridge's lease session ends
            ended = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = (SELECT pid"
                " FROM pg_stat_activity WHERE datname = %s"
                " AND application_name = 'mineclaw-bridge-leases' ORDER BY backend_start LIMIT 1)",
                (db,),
            ).fetchall()
        assert ended
        await first.stderr.wait_for(r"the plugin sends the question again", timeout=WAIT)
        await first.kill()  # the first bridge is gone for good: only the plugin kept it
        held.release.set()
        await lobby.testkit.wait_event(
            lambda e: e.get("event") == "link.up", since=since, timeout=WAIT
        )
        await lobby.message("*", "Answered by the next bridge.", since)
        events = lobby.testkit.events[since:]
        lines = [e.get("text", "") for e in events if e.get("event") == "message"]
        assert sum("Answered by the next bridge." in line for line in lines) == 1, lines
        assert not any("lost its database" in line for line in lines), lines
