"""The recalled block: the asker's and the server's memories only, at most top_k (public_top_k
in public turns and for guests), within the token budget, redacted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.memory.recall import RECALL_HEADING, MemoryRecall, RecallSettings
from bridge.memory.store import MemoryStore
from bridge.redaction import RedactionRule, Redactor
from bridge.store.database import SqliteDatabase
from bridge.turns.ports import PlayerRef, TurnContext

from .test_store import ALEX, STEVE, memory


def turn_of(player: PlayerRef, lane_id: str) -> TurnContext:
    return TurnContext("t-1", "s-1", player, lane_id=lane_id)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    with MemoryStore(SqliteDatabase(tmp_path / "m.sqlite3")) as opened:
        for n in range(6):
            opened.add(memory(f"iron farm number {n} of Steve"))
        opened.add(memory("iron farm of Alex at 5 5 5", owner=ALEX, name="Alex"))
        opened.add(memory("iron is shared at the spawn chest", scope="server"))
        yield opened


def recall(store: MemoryStore, *, guest: bool = False, **settings: int) -> MemoryRecall:
    return MemoryRecall(store, RecallSettings(**settings), redactor=Redactor(), guest=guest)


STEVE_P = PlayerRef(STEVE, "Steve")


async def test_private_turns_get_top_k_public_turns_and_guests_public_top_k(
    store: MemoryStore,
) -> None:
    private = await recall(store, top_k=4, public_top_k=1).recall(turn_of(STEVE_P, "ai-x"), "iron")
    public = await recall(store, top_k=4, public_top_k=1).recall(turn_of(STEVE_P, "public"), "iron")
    guest = await recall(store, guest=True, top_k=4, public_top_k=1).recall(
        turn_of(STEVE_P, "ai-x"), "iron"
    )
    assert private is not None and public is not None and guest is not None
    assert private.startswith(RECALL_HEADING)
    assert len(private.splitlines()) == 1 + 4
    assert len(public.splitlines()) == 1 + 1
    assert len(guest.splitlines()) == 1 + 1
    assert "Alex" not in private


async def test_the_token_budget_bounds_the_block(store: MemoryStore) -> None:
    block = await recall(store, top_k=50, max_tokens=60).recall(turn_of(STEVE_P, "ai-x"), "iron")
    assert block is not None
    assert len(block) <= 60 * 4
    assert 1 < len(block.splitlines()) < 8


async def test_memories_are_redacted_before_they_are_sent(tmp_path: Path) -> None:
    with MemoryStore(SqliteDatabase(tmp_path / "r.sqlite3")) as store:
        store.add(memory("vault code is VAULT-1234-XYZ remember it"))
        redactor = Redactor([RedactionRule(kind="vault", pattern="VAULT-[0-9]+-[A-Z]+")])
        port = MemoryRecall(store, RecallSettings(), redactor=redactor)
        block = await port.recall(turn_of(STEVE_P, "ai-x"), "vault code")
    assert block is not None and "vault code is" in block
    assert "VAULT-1234-XYZ" not in block


async def test_nothing_found_adds_nothing(store: MemoryStore) -> None:
    assert await recall(store).recall(turn_of(STEVE_P, "ai-x"), "obsidian") is None
    assert (
        await recall(store, top_k=0, public_top_k=0).recall(turn_of(STEVE_P, "ai-x"), "iron")
        is None
    )
