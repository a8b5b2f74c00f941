"""Memory recall: the keyword index against a plain ``LIKE`` scan of the same rows, on SQLite
and PostgreSQL, at 10k and 100k memories, in the same run.

Run: ``python -m bench.memory_bench [--sizes 10000,100000] [--queries 300]`` (needs
PostgreSQL's binaries, as ``make install`` installs them; a server of its own is started on
loopback in a temporary folder).

The corpus (fixed seed): ``SERVER`` (200) server memories, and personal memories of 100 per
player (half of ``memory.max_per_player``'s default), so more memories means more players, as
on a real server: 10k memories are about 100 players, 100k about 1,000. Each memory is 8-16
words drawn from a 4,000-word vocabulary with a Zipf-like skew (some words are in many
memories, as "base" or "farm" would be). Each query is 3-6 words of the same vocabulary asked
by a random player.

- index: `MemoryStore.search` (FTS5 with the owner in the MATCH and BM25 among the asker's
  memories on SQLite; the asker's rows by index, then tsvector + ts_rank_cd on PostgreSQL),
  the asker's own and the server's memories, top 5;
- baseline: a plain scan of the same rows: every row read (``NOT INDEXED`` on SQLite, index
  and bitmap scans off on PostgreSQL), the same owner filter, ``LIKE '%word%'`` on any of the
  query's words, the first 5 matches kept (no ranking: cheaper than what it stands for);
- hybrid: `MemoryStore.ranked` with a question vector given (16 dimensions; every memory has
  one): the keyword search plus the cosine over every memory the asker may see (the HTTP
  request for the question's vector is not in it);
- recall: the whole port a turn awaits before its first request (`MemoryRecall.recall`: a
  worker thread, the search, redaction, the block) - the time added before the first frame.

Printed per backend and size: p50 and p99 of each, and the ratio baseline p99 / index p99
(above 1: the index is faster). Both are measured in interleaved rounds on the same machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bridge.memory.query import terms_of
from bridge.memory.recall import MemoryRecall, RecallSettings
from bridge.memory.records import SERVER_OWNER, Memory
from bridge.memory.store import MemoryStore
from bridge.redaction import Redactor
from bridge.store.database import Database
from bridge.store.target import StorageTarget
from bridge.turns.ports import PlayerRef, TurnContext
from tests.memory.embedding_server import vector_of
from tests.postgres_server import start_postgres

PER_PLAYER = 100
SERVER = 200
VOCABULARY = 4000
SEED = 34
MODEL = "bench-embed"
NOW = datetime(2026, 12, 4, tzinfo=UTC)


def words(rng: random.Random) -> list[str]:
    syllables = ["ba", "se", "fa", "rm", "ir", "on", "go", "ld", "ne", "th", "er", "ca", "ve"]
    made: set[str] = set()
    while len(made) < VOCABULARY:
        made.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(made)


def pick(rng: random.Random, vocabulary: list[str]) -> str:
    # Zipf-like: low indexes far more often.
    index = min(len(vocabulary) - 1, int(rng.paretovariate(1.1)) - 1)
    return vocabulary[index] if rng.random() < 0.5 else rng.choice(vocabulary)


def corpus(size: int, vocabulary: list[str], players: list[PlayerRef]) -> list[Memory]:
    rng = random.Random(SEED + size)
    memories = []
    for index in range(size):
        text = " ".join(pick(rng, vocabulary) for _ in range(rng.randint(8, 16)))
        server = index < SERVER
        owner = players[index % len(players)]
        memories.append(
            Memory(
                memory_id=f"m{index:08x}",
                scope="server" if server else "personal",
                owner_uuid=SERVER_OWNER if server else owner.uuid,
                owner_name="" if server else owner.name,
                text=text,
                source="tool",
                created_at=NOW,
            )
        )
    return memories


def like_scan(db: Database, question: str, asker: str) -> int:
    """A plain scan: every row read (no index serves it), the owner filter and the words as
    ``LIKE``, every match returned (no ranking), the first five kept."""
    terms = terms_of(question)
    likes = " OR ".join("LOWER(text) LIKE ?" for _ in terms)
    sql = (
        "SELECT memory_id, text FROM memories {hint} WHERE"
        " ((scope = 'personal' AND owner_uuid = ?) OR scope = 'server')"
        f" AND ({likes})"
    )
    params = (asker, *(f"%{term}%" for term in terms))
    if db.dialect == "sqlite":
        rows = db.query(sql.format(hint="NOT INDEXED"), params)
    else:
        with db.transaction() as tx:
            tx.execute("SET LOCAL enable_indexscan = off")
            tx.execute("SET LOCAL enable_bitmapscan = off")
            rows = tx.query(sql.format(hint=""), params)
    return len(rows[:5])


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure(store: MemoryStore, queries: list[tuple[PlayerRef, str]]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"index": [], "like": []}
    for player, question in queries:
        start = time.perf_counter()
        store.search(question, asker_uuid=player.uuid, limit=5)
        times["index"].append(time.perf_counter() - start)
        start = time.perf_counter()
        like_scan(store.database, question, player.uuid)
        times["like"].append(time.perf_counter() - start)
    times["recall"] = asyncio.run(recall_times(store, queries))
    times["hybrid"] = []
    for player, question in queries:
        vector = vector_of(question)
        start = time.perf_counter()
        store.ranked(question, vector, MODEL, asker_uuid=player.uuid, limit=5)
        times["hybrid"].append(time.perf_counter() - start)
    return times


async def recall_times(store: MemoryStore, queries: list[tuple[PlayerRef, str]]) -> list[float]:
    """The port a turn awaits before its first request, on the running loop as the engine
    calls it (a worker thread, the search, redaction, the block)."""
    recall = MemoryRecall(store, RecallSettings(top_k=5), redactor=Redactor())
    times = []
    for player, question in queries:
        start = time.perf_counter()
        await recall.recall(TurnContext("t-1", "s-1", player, lane_id="ai-x"), question)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    rng = random.Random(SEED)
    vocabulary = words(rng)
    question_rng = random.Random(SEED + 1)
    questions = [
        " ".join(pick(question_rng, vocabulary) for _ in range(question_rng.randint(3, 6)))
        for _ in range(args.queries)
    ]
    server = start_postgres()
    rows: list[str] = []
    try:
        with tempfile.TemporaryDirectory() as scratch:
            for size in sizes:
                players = [
                    PlayerRef(f"00000000-0000-4000-8000-{index:012d}", f"Player{index}")
                    for index in range(max(1, size // PER_PLAYER))
                ]
                asking = random.Random(SEED + 2)
                queries = [(asking.choice(players), question) for question in questions]
                memories = corpus(size, vocabulary, players)
                for backend in ("sqlite", "postgresql"):
                    if backend == "sqlite":
                        target = StorageTarget(Path(scratch) / f"sqlite-{size}")
                    else:
                        target = StorageTarget(
                            Path(scratch) / f"pg-{size}",
                            backend="postgresql",
                            dsn=server.dsn(server.create_database(f"bench{size}")),
                            password=server.password,
                        )
                    with MemoryStore(target.open_state()) as store:
                        loading = time.perf_counter()
                        for first in range(0, size, 5000):
                            store.add_many(memories[first : first + 5000])
                        # Vectors made here (the test server's words-to-meanings vectors,
                        # 16 dimensions), not over HTTP: the row measures the ranking.
                        for first in range(0, size, 5000):
                            batch = memories[first : first + 5000]
                            store.set_embeddings(
                                MODEL, [(m.memory_id, vector_of(m.text)) for m in batch]
                            )
                        loaded = time.perf_counter() - loading
                        if backend == "postgresql":
                            with store.database.transaction() as tx:
                                tx.execute("ANALYZE memories")
                        measure(store, queries[:20])  # warm caches
                        times = measure(store, queries)
                    rows.append(row(backend, size, times, loaded))
                    print(rows[-1], flush=True)
    finally:
        server.remove()
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"memory recall, {args.queries} queries, top 5, load average {load}")
    for line in rows:
        print(line)


def row(backend: str, size: int, times: dict[str, list[float]], loaded: float) -> str:
    ms = {name: [t * 1000 for t in values] for name, values in times.items()}
    index99, like99 = percentile(ms["index"], 0.99), percentile(ms["like"], 0.99)
    return (
        f"  {backend:10} {size:>7} memories (loaded in {loaded:5.1f} s):"
        f" index p50 {statistics.median(ms['index']):6.2f} ms p99 {index99:6.2f} ms |"
        f" LIKE p50 {statistics.median(ms['like']):6.2f} ms p99 {like99:6.2f} ms |"
        f" recall port p50 {statistics.median(ms['recall']):6.2f} ms"
        f" p99 {percentile(ms['recall'], 0.99):6.2f} ms | LIKE/index p99 {like99 / index99:5.2f}"
        f" | hybrid p50 {statistics.median(ms['hybrid']):6.2f} ms"
        f" p99 {percentile(ms['hybrid'], 0.99):6.2f} ms"
    )


if __name__ == "__main__":
    main()
