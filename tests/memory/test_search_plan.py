"""The PostgreSQL keyword search reads the asker's rows by an index, checked on the plan the
tests' real PostgreSQL makes for it (a plan, not a time: a table of 10,000 memories and its
statistics, where a scan of every row or of a common word's postings would also be a choice)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from bridge.memory.query import terms_of, tsquery
from bridge.memory.records import MEMORY_SCOPES, SERVER_OWNER, Memory, new_memory_id
from bridge.memory.store import MemoryStore, postgresql_search
from tests.storage_backends import Backend

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
PLAYERS = 100
PER_PLAYER = 100
WORDS = [f"w{index}" for index in range(50)]


def uuid(index: int) -> str:
    return f"00000000-0000-4000-8000-{index:012d}"


def memories() -> list[Memory]:
    made = []
    for index in range(PLAYERS * PER_PLAYER + 200):
        player = index % PLAYERS
        server = index >= PLAYERS * PER_PLAYER
        # "w0" is in every memory: the GIN index's postings of it span every player.
        text = " ".join(["w0", WORDS[index % 50], WORDS[(index * 7) % 50], "base"])
        made.append(
            Memory(
                memory_id=new_memory_id(),
                scope="server" if server else "personal",
                owner_uuid=SERVER_OWNER if server else uuid(player),
                owner_name=f"Player{player}",
                text=text,
                source="tool",
                created_at=NOW,
            )
        )
    return made


@pytest.fixture
def store(postgres_only: Backend) -> Iterator[MemoryStore]:
    with MemoryStore(postgres_only.target.open_state()) as opened:
        yield opened


def nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)


def test_the_search_reads_the_askers_rows_by_the_scope_index(store: MemoryStore) -> None:
    made = memories()
    for first in range(0, len(made), 500):  # each transaction well inside its deadline
        store.add_many(made[first : first + 500])
    scoped = "m.scope IN (" + ", ".join(f"'{scope}'" for scope in MEMORY_SCOPES) + ")"
    question = tsquery(terms_of("w0 base w7"))
    with store.database.transaction() as tx:
        tx.execute("ANALYZE memories")
        rows = tx.query(
            "EXPLAIN (FORMAT JSON) " + postgresql_search(scoped), (uuid(7), question, uuid(7), 5)
        )
    plan = rows[0][0]
    top = (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]
    steps = list(nodes(top))
    reads = [
        (step["Node Type"], step.get("Index Name")) for step in steps if "Relation Name" in step
    ]
    # Every read of the table is by the owner-and-scope index: no scan of every row, and no
    # start from the keyword index (whose postings of "w0" are every player's).
    assert reads, steps
    assert all(index == "memories_by_scope" for _, index in reads), reads
    assert not any(step["Node Type"] == "Seq Scan" for step in steps), reads
    # The ranking orders only those rows, keeping the best few (a LIMIT over them).
    assert top["Node Type"] == "Limit", top["Node Type"]
