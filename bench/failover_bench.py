"""Failover rows of ``bench.network_bench``: how long a server goes unserved when something in a
two-bridge network dies or hangs.

Real processes throughout: a PostgreSQL server of its own (``tests.postgres_server``), two
``python -m bridge serve`` sharing one database, one testkit JVM (the real plugin core) listing
both bridges with ``--link-timeout-ms 2000``, and the scripted provider. Each row starts a fresh
network, injects one fault at t0 and then asks questions as a player would (``@ai``; a
question the plugin cancels with the offline line is asked again 250 ms later) until one is
answered: the row is that time, from the fault to the answer on the player's screen. The floor
of the same run is the holder killed with SIGKILL (its session ends, its leases free at once).

Rows: the holder killed; the holder paused (SIGSTOP); the holder's database backends paused
while a turn runs (the question asked at t0 waits behind that turn's commit); the standby's
lease backend paused, then the holder killed; the postmaster paused (no new connection is
accepted; the ones open go on); PostgreSQL restarted (every connection and lease ends at once);
the link dropped while an answer streams (a loopback proxy between the plugin and the holder
cuts it, `bench.link_proxy`). Goal (issues 39, 50): each within 5 s, against never.

Run: ``python -m bench.network_bench --failover [--rounds 1]``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

# The end-to-end helpers import their neighbours as the test run does (tests/ on the path).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bench.link_proxy import LinkProxy  # noqa: E402
from tests.app.scripted_provider import ScriptedProvider  # noqa: E402
from tests.interaction.processes import BridgeProcess, TestkitProcess, free_port  # noqa: E402
from tests.interaction.test_network_e2e import Server  # noqa: E402
from tests.interaction.test_takeover_e2e import TOKENS, _config  # noqa: E402
from tests.interaction.test_turns_e2e import OP  # noqa: E402
from tests.postgres_server import PostgresServer, start_postgres  # noqa: E402

WAIT = 120.0
RETRY_S = 0.25


class Network:
    def __init__(
        self,
        postgres: PostgresServer,
        database: str,
        holder: BridgeProcess,
        standby: BridgeProcess,
        lobby: Server,
        provider: ScriptedProvider,
        proxy: LinkProxy | None,
    ) -> None:
        self.postgres = postgres
        self.database = database
        self.holder = holder
        self.standby = standby
        self.lobby = lobby
        self.provider = provider
        self.proxy = proxy
        self.paused: list[int] = []

    def backends(self, application_name: str) -> list[int]:
        with self.postgres.admin() as conn:
            rows = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s AND application_name = %s"
                " ORDER BY backend_start",
                (self.database, application_name),
            ).fetchall()
        return [int(pid) for (pid,) in rows]

    def pause(self, pids: list[int]) -> None:
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
            self.paused.append(pid)

    async def answered_after(self, t0: float) -> float:
        """Ask until a question is answered; seconds from ``t0`` to that answer."""
        # One scripted answer: a question the plugin cancels never reaches the provider.
        self.provider.answer("Served again.")
        since = self.lobby.mark()
        n = 0
        async with asyncio.timeout(WAIT):
            while True:
                n += 1
                outcome = await self.lobby.chat("Steve", f"@ai question {n}")
                if outcome["outcome"] == "public":
                    await self.lobby.testkit.wait_event(
                        lambda e: (
                            e.get("event") == "message" and "Served again." in e.get("text", "")
                        ),
                        since=since,
                        timeout=WAIT,
                    )
                    return time.monotonic() - t0
                await asyncio.sleep(RETRY_S)


async def _network(tmp: Path, postgres: PostgresServer, *, proxied: bool) -> Network:
    provider = ScriptedProvider()
    await provider.start()
    database = postgres.create_database("failover")
    dsn = postgres.dsn(database)
    for name in ("a", "b"):
        # Each bridge's own application_name (the DSN's wins), to find its backends.
        _config(tmp / name, provider, f"{dsn}?application_name=bench-{name}", postgres.password)
    holder = await BridgeProcess.start(tmp / "a", port=free_port())
    await holder.stdout.wait_for(r"^server leases \(PostgreSQL\) held: default, ", timeout=WAIT)
    standby = await BridgeProcess.start(tmp / "b", port=free_port())
    await standby.stdout.wait_for(r"^server leases \(PostgreSQL\) held: none yet$", timeout=WAIT)
    proxy = None
    if proxied:  # the plugin reaches the holder through a proxy the row cuts
        proxy = LinkProxy(holder.url)
        await proxy.start()
    testkit = await TestkitProcess.start(
        holder.url if proxy is None else proxy.url,
        holder.token_file,
        *("--url", standby.url, "--token", TOKENS["lobby"], "--server-id", "lobby"),
        *("--link-timeout-ms", "2000"),
    )
    await testkit.wait_event(lambda e: e.get("event") == "link.up")
    lobby = Server("lobby", testkit)
    await lobby.add("Steve", OP)
    return Network(postgres, database, holder, standby, lobby, provider, proxy)


async def _close(network: Network) -> None:
    for pid in network.paused:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
    for bridge in (network.holder, network.standby):
        try:
            bridge.process.send_signal(signal.SIGCONT)
        except ProcessLookupError:
            pass
    await network.lobby.testkit.shutdown()
    if network.proxy is not None:
        await network.proxy.close()
    for bridge in (network.holder, network.standby):
        await bridge.kill()
    await network.provider.stop()
    network.postgres.drop_database(network.database)


async def _holder_killed(network: Network) -> float:
    t0 = time.monotonic()
    network.holder.process.send_signal(signal.SIGKILL)
    return await network.answered_after(t0)


async def _holder_paused(network: Network) -> float:
    t0 = time.monotonic()
    network.holder.process.send_signal(signal.SIGSTOP)
    return await network.answered_after(t0)


async def _backend_stalled(network: Network) -> float:
    held = network.provider.held("Cut ", "short.")
    await network.lobby.chat("Steve", "@ai running")
    await held.streaming.wait()
    network.pause(network.backends("bench-a"))  # the archive's, the audit log's, the ledger's
    t0 = time.monotonic()
    held.release.set()  # the turn ends and its commit meets the paused backend
    return await network.answered_after(t0)


async def _standby_stalled(network: Network) -> float:
    leases = network.backends("mineclaw-bridge-leases")
    network.pause(leases[-1:])  # the standby's: it connected last
    t0 = time.monotonic()
    network.holder.process.send_signal(signal.SIGKILL)
    return await network.answered_after(t0)


def postmaster_pid(postgres: PostgresServer) -> int:
    """The postmaster's process id: the first line of ``postmaster.pid``."""
    return int((postgres.data_dir / "postmaster.pid").read_text().split()[0])


async def _postmaster_paused(network: Network) -> float:
    network.pause([postmaster_pid(network.postgres)])
    t0 = time.monotonic()
    return await network.answered_after(t0)


async def _postgres_restarted(network: Network) -> float:
    t0 = time.monotonic()
    await asyncio.to_thread(network.postgres.stop)
    await asyncio.to_thread(network.postgres.start)
    return await network.answered_after(t0)


async def _link_dropped(network: Network) -> float:
    assert network.proxy is not None
    held = network.provider.held("Cut ", "short.")
    await network.lobby.chat("Steve", "@ai running")
    await held.streaming.wait()
    t0 = time.monotonic()
    network.proxy.drop()
    held.release.set()
    return await network.answered_after(t0)


Fault = Callable[[Network], Awaitable[float]]

ROWS: list[tuple[str, Fault, bool]] = [
    ("holder killed (floor)", _holder_killed, False),
    ("holder paused", _holder_paused, False),
    ("holder's backend stalled", _backend_stalled, False),
    ("standby's lease stalled", _standby_stalled, False),
    ("postmaster paused", _postmaster_paused, False),
    ("PostgreSQL restarted", _postgres_restarted, False),
    ("link dropped mid-answer", _link_dropped, True),
]


async def run(rounds: int, only: str | None = None) -> int:
    """Every row (``only``: the floor and the rows whose name holds it)."""
    postgres = start_postgres()
    try:
        chosen = [ROWS[0], *(row for row in ROWS[1:] if only is None or only in row[0])]
        times: dict[str, list[float]] = {name: [] for name, _, _ in chosen}
        for _ in range(rounds):
            for name, fault, proxied in chosen:
                with tempfile.TemporaryDirectory(prefix="failover-bench-") as tmp:
                    network = await _network(Path(tmp), postgres, proxied=proxied)
                    try:
                        times[name].append(await fault(network))
                        print(f"  {name}: {times[name][-1]:.2f} s", file=sys.stderr, flush=True)
                    finally:
                        await _close(network)
        floor = statistics.median(times[chosen[0][0]])
        print(f"failover: {rounds} round(s); seconds from the fault to an answer")
        print(f"{'':<28}{'median s':>10}{'max s':>8}{'x floor':>9}")
        for name, _, _ in chosen:
            median = statistics.median(times[name])
            print(f"{name:<28}{median:>10.2f}{max(times[name]):>8.2f}{median / floor:>9.2f}")
        return 0
    finally:
        postgres.remove()
