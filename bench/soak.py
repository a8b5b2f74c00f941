"""A storm soak of a network (issue 50, part 4): real processes under faults drawn from a seed,
then ``bench.soak_check`` proves from the records that nothing was lost, doubled or leaked.

Real parts throughout: a PostgreSQL server of its own (``tests.postgres_server``), three
``python -m bridge serve`` sharing one database, each behind a loopback proxy the soak can cut
(``bench.link_proxy``), testkit JVMs (the real plugin core) listing all three, and the soak's
model (``bench.soak_provider``, answering each question by its tag). Players ask in turns, in
public (``@ai``) and in private (``/ai``); each waits for its question to end (answered, or the
player told) before asking again, so the pace is the network's, never a timer's.

Faults come from ``random.Random(seed)``: a bridge killed (SIGKILL, started again later), a
bridge paused (SIGSTOP, SIGCONT later), a bridge's database backends paused, the postmaster
paused, PostgreSQL restarted, every link of one bridge dropped, the model stalling its streams,
the model breaking its next streams. A fault lasts until a number of questions ended after it
(events, not durations; bounded by ``FAULT_BOUND_S`` for a fault that stops all service), then
is undone, and the next one comes after more questions ended. The seed replays the schedule of
fault kinds and targets (timing of the processes themselves is the machine's).

Run: ``python -m bench.soak [--seconds 600] [--seed 1] [--servers 4] [--players 10] [--out DIR]``
(the record is written to DIR/record.json and checked; exit 1 when an invariant fails).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The end-to-end helpers import their neighbours as the test run does (tests/ on the path).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import psycopg  # noqa: E402

from bench.link_proxy import LinkProxy  # noqa: E402
from bench.soak_check import check, is_notice, print_report, summary  # noqa: E402
from bench.soak_provider import SoakProvider  # noqa: E402
from tests.interaction.processes import BridgeProcess, TestkitProcess, free_port  # noqa: E402
from tests.interaction.test_turns_e2e import write_config  # noqa: E402
from tests.postgres_server import PostgresServer, start_postgres  # noqa: E402

BRIDGES = ("a", "b", "c")
PERMISSIONS = ["mineclaw.command.chat", "mineclaw.command.private"]
QUESTION_BOUND_S = 120.0
"""How long one question may take to end under the worst fault (a failover, a restart)."""
FAULT_BOUND_S = 30.0
"""A fault is undone after this long even if no question ended meanwhile (a fault that
stops every service must end for the soak to go on)."""
ENDED_PER_FAULT = 3
"""Questions that must end while a fault holds, and between two faults."""
FAULTS = (
    "bridge_killed",
    "bridge_paused",
    "backends_paused",
    "postmaster_paused",
    "postgres_restarted",
    "links_dropped",
    "model_stalled",
    "model_breaks",
)


def _token(server: str) -> str:
    return (server.replace("-", "x") * 8)[:43]


def _config(
    folder: Path, name: str, provider_port: int, dsn: str, password: str, servers: list[str]
) -> None:
    config_yml = (
        "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
        f"storage:\n  backend: postgresql\n  dsn: {dsn}?application_name=soak-{name}\n"
        "  password: ${MINECLAW_DB_PASSWORD}\n"
    )
    servers_yml = "schema: 1\nservers:\n" + "".join(
        f"  {s}:\n    token: ${{{s.upper().replace('-', '_')}_LINK_TOKEN}}\n" for s in servers
    )
    write_config(folder, provider_port, config_yml, {"servers.yml": servers_yml})
    providers = (folder / "providers.yml").read_text()
    # The bridge's own key: the provider's log says which bridge asked.
    (folder / "providers.yml").write_text(
        providers.replace("sk-test-secret-key", f"sk-soak-{name}")
    )
    env = folder / ".env"
    env.write_text(
        f"MINECLAW_DB_PASSWORD={password}\n"
        + "".join(f"{s.upper().replace('-', '_')}_LINK_TOKEN={_token(s)}\n" for s in servers)
    )
    env.chmod(0o600)


async def _until(
    testkit: TestkitProcess, matches: Any, since: int, timeout: float
) -> dict[str, Any] | None:
    """The first event from ``since`` on that ``matches``, or None when ``timeout`` passes
    (the soak records a question that never ended; it does not stop)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout):
            while True:
                for event in testkit.events[since:]:
                    if matches(event):
                        return event
                if testkit.stdout.ended:
                    return None
                testkit.stdout.changed.clear()
                await testkit.stdout.changed.wait()
    return None


@dataclass
class Question:
    tag: str
    server: str
    player: str
    kind: str  # "public" (@ai) or "private" (/ai)
    asked_at: float
    mark: int
    ended_at: float | None = None
    outcome: str | None = None


@dataclass
class Storm:
    tmp: Path
    seed: int
    postgres: PostgresServer
    database: str
    provider: SoakProvider
    bridges: dict[str, BridgeProcess] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    proxies: dict[str, LinkProxy] = field(default_factory=dict)
    testkits: dict[str, TestkitProcess] = field(default_factory=dict)
    questions: list[Question] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    ended_count: int = 0
    paused: list[int] = field(default_factory=list)
    started: list[tuple[str, BridgeProcess]] = field(default_factory=list)
    """Every bridge process the soak started, replaced or not, by name: the teardown kills
    them all and keeps each one's log."""

    def backends(self, name: str) -> list[int]:
        with self.postgres.admin() as conn:
            rows = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s AND application_name = %s",
                (self.database, f"soak-{name}"),
            ).fetchall()
        return [int(pid) for (pid,) in rows]

    def postmaster(self) -> int:
        return int((self.postgres.data_dir / "postmaster.pid").read_text().split()[0])

    def signal(self, pids: list[int], signum: int) -> None:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    async def start_bridge(self, name: str) -> None:
        if not _port_free(self.ports[name]):
            # Another process of the machine took the port while the bridge was down: a new
            # one, and its proxy follows (the plugins only know the proxies).
            self.ports[name] = free_port()
            if name in self.proxies:
                self.proxies[name].target_port = self.ports[name]
        old = self.bridges.get(name)
        if old is not None and old.process.returncode is None:
            await old.kill()  # never two of one name: the replaced one would outlive the soak
        bridge = await BridgeProcess.start(self.tmp / name, port=self.ports[name])
        self.started.append((name, bridge))
        self.bridges[name] = bridge


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


async def _player(
    storm: Storm, server: str, player: str, rng: random.Random, stop_at: float
) -> None:
    testkit = storm.testkits[server]
    n = 0
    while time.monotonic() < stop_at:
        n += 1
        tag = f"q-{server}-{player.lower()}-{n}"
        kind = "private" if rng.random() < 0.4 else "public"
        mark = len(testkit.events)
        question = Question(tag, server, player, kind, time.time(), mark)
        storm.questions.append(question)
        ref = f"{tag}-ref"
        if kind == "public":
            await testkit.send({"op": "chat", "player": player, "text": f"@ai {tag}", "ref": ref})
            outcome = await _until(
                testkit,
                lambda e, ref=ref: e.get("event") == "chat.outcome" and e.get("ref") == ref,
                mark,
                QUESTION_BOUND_S,
            )
            if outcome is not None and outcome.get("outcome") == "cancelled":
                question.ended_at, question.outcome = time.time(), "cancelled"
        else:
            await testkit.send({"op": "ask", "player": player, "text": tag, "ref": ref})
        if question.outcome is None:
            # Ended: its answer reached the asker, or a line told them it did not come.
            answer = f"A:{tag}"
            ending = await _until(
                testkit,
                lambda e, answer=answer, player=player: (
                    e.get("event") == "message"
                    and (
                        (e.get("to") in (player, "*") and answer in e.get("text", ""))
                        or (e.get("to") == player and is_notice(e.get("text", "")))
                    )
                ),
                mark,
                QUESTION_BOUND_S,
            )
            question.ended_at = time.time()
            if ending is None:
                question.outcome = "silent"
            else:
                question.outcome = "answered" if answer in ending["text"] else "told"
        storm.ended_count += 1
        storm.ended.set()
        if question.outcome in ("cancelled", "told") and _link_down(testkit):
            # Told the assistant is offline: a player waits for it to be back rather than
            # asking again at once (hundreds of offline lines test nothing more).
            await _until(
                testkit,
                lambda e: e.get("event") == "link.up",
                len(testkit.events),
                QUESTION_BOUND_S,
            )


def _link_down(testkit: TestkitProcess) -> bool:
    for event in reversed(testkit.events):
        if event.get("event") in ("link.up", "link.down"):
            return bool(event["event"] == "link.down")
    return False


async def _questions_end(storm: Storm, count: int, bound: float) -> None:
    target = storm.ended_count + count
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(bound):
            while storm.ended_count < target:
                storm.ended.clear()
                await storm.ended.wait()


async def _fault(storm: Storm, kind: str, rng: random.Random) -> None:
    # Mostly the bridge serving the most servers now (a fault on an idle standby tests
    # little), sometimes any.
    busiest = max(storm.proxies[b].open_links for b in BRIDGES)
    serving = [b for b in BRIDGES if storm.proxies[b].open_links == busiest]
    name = rng.choice(serving if rng.random() < 0.75 else list(BRIDGES))
    record: dict[str, Any] = {"kind": kind, "bridge": name, "at": time.time()}
    storm.faults.append(record)
    print(f"  fault {len(storm.faults)}: {kind} ({name})", file=sys.stderr, flush=True)
    undo: list[Any] = []
    if kind == "bridge_killed":
        storm.bridges[name].process.send_signal(signal.SIGKILL)
        undo.append(lambda: _restart(storm, name))
    elif kind == "bridge_paused":
        storm.signal([storm.bridges[name].process.pid], signal.SIGSTOP)
        undo.append(lambda: _cont(storm, [storm.bridges[name].process.pid]))
    elif kind == "backends_paused":
        pids = storm.backends(name)
        storm.signal(pids, signal.SIGSTOP)
        undo.append(lambda: _cont(storm, pids))
    elif kind == "postmaster_paused":
        pids = [storm.postmaster()]
        storm.signal(pids, signal.SIGSTOP)
        undo.append(lambda: _cont(storm, pids))
    elif kind == "postgres_restarted":
        await asyncio.to_thread(storm.postgres.stop)
        await asyncio.to_thread(storm.postgres.start)
    elif kind == "links_dropped":
        storm.proxies[name].drop()
    elif kind == "model_stalled":
        storm.provider.stall_streams()
        undo.append(lambda: _unstall(storm))
    elif kind == "model_breaks":
        storm.provider.breaks += 2
    await _questions_end(storm, ENDED_PER_FAULT, FAULT_BOUND_S)
    for step in undo:
        await step()
    record["undone"] = time.time()


async def _restart(storm: Storm, name: str) -> None:
    old = storm.bridges[name]
    await old.kill()
    await storm.start_bridge(name)


async def _cont(storm: Storm, pids: list[int]) -> None:
    storm.signal(pids, signal.SIGCONT)


async def _unstall(storm: Storm) -> None:
    storm.provider.unstall()


async def _faults(storm: Storm, rng: random.Random, stop_at: float) -> None:
    await _questions_end(storm, ENDED_PER_FAULT * 2, FAULT_BOUND_S * 4)
    while time.monotonic() < stop_at:
        await _fault(storm, rng.choice(FAULTS), rng)
        await _questions_end(storm, ENDED_PER_FAULT, FAULT_BOUND_S * 4)


def _store_rows(storm: Storm) -> dict[str, Any]:
    with psycopg.connect(
        storm.postgres.dsn(storm.database), password=storm.postgres.password
    ) as conn:
        items = conn.execute(
            "SELECT t.turn_id, t.player, t.ended_at, i.item_json FROM turns t"
            " JOIN turn_items i ON i.turn_id = t.turn_id ORDER BY t.seq, i.position"
        ).fetchall()
        usage = conn.execute(
            "SELECT purpose, SUM(tokens), SUM(estimated_tokens) FROM usage_purposes"
            " WHERE holder = '*server*' AND period_kind = 'month' GROUP BY purpose"
        ).fetchall()
    archive: list[dict[str, Any]] = []
    for turn_id, player, ended_at, item_json in items:
        item = json.loads(item_json)
        archive.append(
            {
                "turn_id": turn_id,
                "player": player,
                "ended_at": ended_at,
                "kind": item.get("kind"),
                "text": str(item.get("text", "")),
            }
        )
    return {
        "archive": archive,
        "ledger": {p: [int(total), int(estimated)] for p, total, estimated in usage},
    }


async def run(seconds: float, seed: int, servers: int, players: int, out: Path) -> dict[str, Any]:
    rng = random.Random(seed)
    server_ids = [f"srv-{n}" for n in range(servers)]
    postgres = start_postgres()
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp_name:
        tmp = Path(tmp_name)
        provider = SoakProvider()
        await provider.start()
        database = postgres.create_database("soak")
        storm = Storm(tmp, seed, postgres, database, provider)
        try:
            for name in BRIDGES:
                _config(
                    tmp / name,
                    name,
                    provider.port,
                    postgres.dsn(database),
                    postgres.password,
                    server_ids,
                )
                storm.ports[name] = free_port()
                await storm.start_bridge(name)
                if name == "a":  # the first holds every server; the others stand by
                    await storm.bridges[name].stdout.wait_for(
                        r"^server leases \(PostgreSQL\) held: ", timeout=QUESTION_BOUND_S
                    )
                proxy = LinkProxy(storm.bridges[name].url)
                await proxy.start()
                storm.proxies[name] = proxy
            first = storm.bridges["a"]
            for server in server_ids:
                urls = [arg for name in BRIDGES[1:] for arg in ("--url", storm.proxies[name].url)]
                testkit = await TestkitProcess.start(
                    storm.proxies["a"].url,
                    first.token_file,
                    *urls,
                    *("--token", _token(server), "--server-id", server),
                    *("--link-timeout-ms", "2000"),
                    *("--ask-trail", "on"),  # a lost question's report names the step
                )
                storm.testkits[server] = testkit
                await _until(testkit, lambda e: e.get("event") == "link.up", 0, QUESTION_BOUND_S)
                for p in range(players):
                    await testkit.send(
                        {"op": "player.add", "name": f"P{p}", "permissions": PERMISSIONS}
                    )
            started = time.monotonic()
            stop_at = started + seconds
            tasks = [
                _player(storm, server, f"P{p}", random.Random(f"{seed}-{server}-{p}"), stop_at)
                for server in server_ids
                for p in range(players)
            ]
            faults = asyncio.ensure_future(_faults(storm, rng, stop_at))
            await asyncio.gather(*tasks)
            faults.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await faults
            # Undo what a cancelled fault left: every process runs again.
            provider.unstall()
            storm.signal([b.process.pid for b in storm.bridges.values()], signal.SIGCONT)
            storm.signal([storm.postmaster()], signal.SIGCONT)
            for name, bridge in storm.bridges.items():
                if bridge.process.returncode is not None:
                    await storm.start_bridge(name)
            received = {
                # Every event, so each question's mark indexes its own list.
                server: testkit.events
                for server, testkit in storm.testkits.items()
            }
            record = {
                "seed": seed,
                "seconds": seconds,
                "servers": servers,
                "players": players,
                "questions": [q.__dict__ for q in storm.questions],
                "faults": storm.faults,
                "received": received,
                "provider": provider.records(),
                **_store_rows(storm),
            }
        finally:
            for testkit in storm.testkits.values():
                with contextlib.suppress(Exception):
                    await testkit.shutdown()
            for _, bridge in storm.started:
                with contextlib.suppress(ProcessLookupError):
                    bridge.process.send_signal(signal.SIGCONT)
                await bridge.kill()
            for proxy in storm.proxies.values():
                await proxy.close()
            await provider.stop()
            with contextlib.suppress(Exception):
                storm.signal([storm.postmaster()], signal.SIGCONT)
            postgres.remove()
    out.mkdir(parents=True, exist_ok=True)
    (out / "record.json").write_text(json.dumps(record, indent=1))
    _keep_logs(storm, out / "bridges")
    return record


def _keep_logs(storm: Storm, folder: Path) -> None:
    """Each bridge process's output, in the order they started (``03-b.log``: the third
    started, bridge b): a failed invariant's story often ends in a bridge's own log."""
    folder.mkdir(parents=True, exist_ok=True)
    for number, (name, bridge) in enumerate(storm.started, start=1):
        lines = [*bridge.stderr.lines, "--- stdout ---", *bridge.stdout.lines]
        (folder / f"{number:02d}-{name}.log").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--players", type=int, default=10, help="per server")
    parser.add_argument("--out", type=Path, default=Path("soak-out"))
    args = parser.parse_args(argv)
    record = asyncio.run(run(args.seconds, args.seed, args.servers, args.players, args.out))
    print(summary(record))
    results = check(record)
    print_report(results)
    failed = [r for r in results if not r.held]
    if failed:
        print(f"FAILED: replay with --seed {args.seed}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
