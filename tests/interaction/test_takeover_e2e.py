"""A second bridge takes over, end to end: two ``python -m bridge serve`` processes on one real
PostgreSQL database (each server leased by one of them), two testkit servers listing both
bridges, and the first bridge killed with SIGKILL while both servers are mid-turn.

What must hold: the second bridge serves both servers within moments (the plugins move on by
themselves); every turn completed before the kill is in the archive once and the sessions go on
from it; the turns cut off mid-stream are in the archive not at all, and are not run again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from app.scripted_provider import ScriptedProvider

from tests.postgres_server import PostgresServer

from .processes import BridgeProcess, TestkitProcess, free_port, require_testkit_jar
from .test_network_e2e import Server
from .test_turns_e2e import OP, write_config

pytestmark = pytest.mark.jvm

SERVERS = ("lobby", "survival")
TOKENS = {server: (server[0] * 43) for server in SERVERS}
WAIT = 60.0


def _config(folder: Path, provider: ScriptedProvider, dsn: str, password: str) -> None:
    config_yml = (
        "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
        f"storage:\n  backend: postgresql\n  dsn: {dsn}\n  password: ${{MINECLAW_DB_PASSWORD}}\n"
    )
    servers = "schema: 1\nservers:\n" + "".join(
        f"  {s}:\n    token: ${{{s.upper()}_LINK_TOKEN}}\n" for s in SERVERS
    )
    write_config(folder, provider.port, config_yml, {"servers.yml": servers})
    env = folder / ".env"
    env.write_text(
        f"MINECLAW_DB_PASSWORD={password}\n"
        + "".join(f"{s.upper()}_LINK_TOKEN={TOKENS[s]}\n" for s in SERVERS)
    )
    env.chmod(0o600)


@contextlib.asynccontextmanager
async def two_bridges(
    tmp_path: Path, postgres_server: PostgresServer
) -> AsyncIterator[tuple[BridgeProcess, BridgeProcess, dict[str, Server], ScriptedProvider, str]]:
    require_testkit_jar()
    provider = ScriptedProvider()
    await provider.start()
    database = postgres_server.create_database("takeover")
    dsn = postgres_server.dsn(database)
    running: list[BridgeProcess] = []
    testkits: list[TestkitProcess] = []
    try:
        for name in ("a", "b"):
            _config(tmp_path / name, provider, dsn, postgres_server.password)
        first = await BridgeProcess.start(tmp_path / "a", port=free_port())
        running.append(first)
        await first.stdout.wait_for(
            r"^server leases \(PostgreSQL\) held: default, lobby, survival$", timeout=WAIT
        )
        second = await BridgeProcess.start(tmp_path / "b", port=free_port())
        running.append(second)
        await second.stdout.wait_for(r"^server leases \(PostgreSQL\) held: none yet$", timeout=WAIT)
        servers: dict[str, Server] = {}
        for server in SERVERS:
            testkit = await TestkitProcess.start(
                first.url,
                first.token_file,
                "--url",
                second.url,
                "--token",
                TOKENS[server],
                "--server-id",
                server,
            )
            testkits.append(testkit)
            await testkit.wait_event(lambda e: e.get("event") == "link.up")
            servers[server] = Server(server, testkit)
        yield first, second, servers, provider, database
    finally:
        for testkit in testkits:
            await testkit.shutdown()
        for bridge in running:
            await bridge.kill()
        await provider.stop()
        postgres_server.drop_database(database)


def _archived(server: PostgresServer, database: str) -> list[tuple[str, list[str]]]:
    """Each archived turn (in order) with the players' texts among its items."""
    with psycopg.connect(server.dsn(database), password=server.password) as conn:
        turns = conn.execute("SELECT turn_id FROM turns ORDER BY seq").fetchall()
        result = []
        for (turn_id,) in turns:
            items = conn.execute(
                "SELECT item_json FROM turn_items WHERE turn_id = %s ORDER BY position",
                (turn_id,),
            ).fetchall()
            texts = [
                str(parsed.get("text", ""))
                for parsed in (json.loads(item) for (item,) in items)
                if parsed.get("kind") == "player"
            ]
            result.append((turn_id, texts))
    return result


def _users(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


async def test_a_bridge_killed_mid_turn_is_replaced_by_the_second_without_losing_or_repeating(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    async with two_bridges(tmp_path, postgres_server) as (first, second, servers, provider, db):
        lobby, survival = servers["lobby"], servers["survival"]
        for server in (lobby, survival):
            await server.add("Steve", OP)
        # One completed turn on each server, served by the first bridge.
        for server in (lobby, survival):
            provider.answer(f"{server.name} done.")
            since = server.mark()
            assert (await server.chat("Steve", f"@ai {server.name} first"))["outcome"] == "public"
            await server.message("*", f"{server.name} done.", since)
        # Both servers mid-turn: the provider streams a first delta and hangs.
        held = [provider.held("cut ", "off"), provider.held("cut ", "off")]
        for server in (lobby, survival):
            assert (await server.chat("Steve", f"@ai {server.name} second"))["outcome"] == "public"
        for reply in held:
            await asyncio.wait_for(reply.streaming.wait(), WAIT)
        # The plugins kept the cut-off questions (protocol 1.5) and send them again.
        provider.answer("Answered after the takeover.")
        provider.answer("Answered after the takeover.")
        marks = {server.name: server.mark() for server in (lobby, survival)}

        first.process.send_signal(signal.SIGKILL)
        await first.wait()

        # The plugins move on to the second bridge, which takes the leases and serves them.
        for server in (lobby, survival):
            await server.testkit.wait_event(
                lambda e: e.get("event") == "link.up", since=marks[server.name], timeout=WAIT
            )
        await second.stderr.wait_for(r"server survival: lease taken", timeout=WAIT)
        await second.stderr.wait_for(r"server lobby: lease taken", timeout=WAIT)
        # The second bridge answers each cut-off question, once.
        for server in (lobby, survival):
            await server.message("*", "Answered after the takeover.", marks[server.name])

        # Each server's session goes on from its completed turns; the cut-off attempt is not
        # there, its answer by the second bridge is.
        for server in (lobby, survival):
            provider.answer(f"{server.name} after the takeover.")
            since = server.mark()
            assert (await server.chat("Steve", f"@ai {server.name} third"))["outcome"] == "public"
            await server.message("*", f"{server.name} after the takeover.", since)
            assert _users(provider.bodies()[-1]) == [
                f"{server.name} first",
                f"{server.name} second",
                f"{server.name} third",
            ]
            answers = [
                e
                for e in server.testkit.events[marks[server.name] :]
                if e.get("event") == "message" and "Answered after the takeover." in e["text"]
            ]
            assert len(answers) == 1, answers

        archived = _archived(postgres_server, db)
        asked = [text for _, texts in archived for text in texts]
        for server in ("lobby", "survival"):
            for question in ("first", "second", "third"):
                count = sum(f"{server} {question}" in text for text in asked)
                assert count == 1, (server, question, asked)
        assert len({turn_id for turn_id, _ in archived}) == len(archived) == 6
        # No turn ran twice: the provider saw each question once, but the cut-off ones: once
        # on the killed bridge and once, sent again by the plugin, on the second.
        for server in ("lobby", "survival"):
            for question, times in (("first", 1), ("second", 2), ("third", 1)):
                seen = [b for b in provider.bodies() if _users(b)[-1:] == [f"{server} {question}"]]
                assert len(seen) == times, (server, question)
