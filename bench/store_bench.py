"""Archive and audit write throughput: PostgreSQL against SQLite, in the same run.

Run: ``python -m bench.store_bench`` (needs PostgreSQL's binaries; ``make install`` installs
them). It starts a PostgreSQL server of its own on loopback in a temporary folder, with
``fsync`` on as a deployment runs it, and writes the same work to both backends:

- the archive: turns of ``ITEMS_PER_TURN`` items, each appended in its own transaction, one
  after another (as the engine commits them); SQLite runs ``synchronous=FULL``, PostgreSQL
  ``synchronous_commit=on``, so both pay for a durable commit per turn;
- the audit log: ``AUDIT_EVENTS`` events recorded as fast as the caller can and then flushed
  (the queue holds them all, so none is dropped, and the run checks every one was stored): the
  figure is what the writer thread sustains, its batches and its commits.

It prints turns/s and events/s per backend and the ratio PostgreSQL / SQLite (above 1:
PostgreSQL is faster). The SQLite figures are the baseline of the same run, on the same disk.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bridge.store.archive import ArchivedTurn
from bridge.store.target import StorageTarget
from tests.postgres_server import start_postgres

TURNS = 300
ITEMS_PER_TURN = 12
AUDIT_EVENTS = 30_000
ROUNDS = 3


def make_turn(index: int) -> ArchivedTurn:
    now = datetime.now(UTC)
    return ArchivedTurn(
        turn_id=f"turn-{index:07d}",
        session_id=f"session-{index // 20}",
        player="Steve",
        started_at=now,
        ended_at=now,
        model_ref="openai/gpt-x",
        control_version="1",
        items=tuple(
            {"type": "message", "role": "assistant", "text": "x" * (40 + position * 8)}
            for position in range(ITEMS_PER_TURN)
        ),
    )


def archive_rate(target: StorageTarget, first: int) -> float:
    turns = [make_turn(first + i) for i in range(TURNS)]
    with target.open_archive() as archive:
        start = time.perf_counter()
        for turn in turns:
            archive.append(turn)
        elapsed = time.perf_counter() - start
    return TURNS / elapsed


def audit_rate(target: StorageTarget) -> float:
    # A queue that holds the whole run: the figure is what the writer stores, none dropped.
    with target.open_audit(queue_size=2 * AUDIT_EVENTS) as log:
        before = len(log.events("tool.call"))
        start = time.perf_counter()
        for index in range(AUDIT_EVENTS):
            log.record(
                "tool.call",
                {"turn_id": f"turn-{index // 5}", "tool": "block_inspect", "index": index},
            )
        log.flush(timeout=600)
        elapsed = time.perf_counter() - start
        stored = len(log.events("tool.call")) - before
    if stored != AUDIT_EVENTS:
        raise SystemExit(f"{target.backend}: {stored} of {AUDIT_EVENTS} audit events stored")
    return AUDIT_EVENTS / elapsed


def main() -> None:
    server = start_postgres(durable=True)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            sqlite = StorageTarget(Path(scratch) / "sqlite")
            database = server.create_database("bench")
            postgres = StorageTarget(
                Path(scratch) / "pg",
                backend="postgresql",
                dsn=server.dsn(database),
                password=server.password,
            )
            results: dict[str, dict[str, list[float]]] = {
                "archive": {"sqlite": [], "postgresql": []},
                "audit": {"sqlite": [], "postgresql": []},
            }
            # Interleaved rounds, so a noisy moment on the shared machine hits both sides.
            for round_ in range(ROUNDS):
                for name, target in (("sqlite", sqlite), ("postgresql", postgres)):
                    results["archive"][name].append(archive_rate(target, round_ * TURNS))
                    results["audit"][name].append(audit_rate(target))
    finally:
        server.remove()
    print(f"store write throughput, median of {ROUNDS} interleaved rounds (machine shared)")
    for what, unit, size in (
        ("archive", "turns/s", f"{TURNS} turns x {ITEMS_PER_TURN} items"),
        ("audit", "events/s", f"{AUDIT_EVENTS} events"),
    ):
        lite = statistics.median(results[what]["sqlite"])
        pg = statistics.median(results[what]["postgresql"])
        print(
            f"  {what:8} ({size}): sqlite {lite:10.0f} {unit}   postgresql {pg:10.0f} {unit}"
            f"   ratio postgresql/sqlite {pg / lite:5.2f}"
        )


if __name__ == "__main__":
    main()
