"""``remember`` and ``recall`` on a real store: personal by default, server memories only with
mineclaw.memory.server and, from a private conversation, the asker's consent; redacted before
they are kept; the asker is shown what was kept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.memory.records import SERVER_MEMORY_NODE
from bridge.memory.store import MemoryStore
from bridge.redaction import RedactionRule, Redactor
from bridge.store.database import SqliteDatabase
from bridge.tools.memory_tools import MemoryTools, MemoryToolSettings
from bridge.tools.registry import CallContext
from bridge.tools.results import ToolFailure

STEVE = "00000000-0000-0000-0000-00000000000s"
ALEX = "00000000-0000-0000-0000-00000000000a"
REDACTOR = Redactor([RedactionRule(kind="vault", pattern="VAULT-[0-9]+")])


def context(
    uuid: str = STEVE,
    name: str = "Steve",
    *,
    lane: str = "public",
    granted: frozenset[str] = frozenset(),
) -> CallContext:
    return CallContext("t1", "c1", uuid, name, lane_id=lane, granted=granted)


class Asker:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[str] = []
        self.shown: list[str] = []

    async def consent(self, ctx: CallContext, text: str) -> bool:
        self.asked.append(text)
        return self.answer

    async def notify(self, ctx: CallContext, text: str) -> None:
        self.shown.append(text)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    with MemoryStore(SqliteDatabase(tmp_path / "m.sqlite3")) as opened:
        yield opened


def tools(store: MemoryStore, asker: Asker | None = None, **settings: int) -> MemoryTools:
    made = MemoryTools(
        store, settings=lambda: MemoryToolSettings(**settings), redactor=lambda: REDACTOR
    )
    if asker is not None:
        made.notify, made.consent = asker.notify, asker.consent
    return made


async def test_remember_keeps_a_redacted_personal_memory_and_shows_it(store: MemoryStore) -> None:
    asker = Asker(True)
    result = await tools(store, asker).remember(
        {"text": "my   vault is VAULT-99 at 1 2 3"}, context()
    )
    assert result["scope"] == "personal"
    assert "VAULT-99" not in result["remembered"]
    assert asker.shown == [result["remembered"]]
    [kept] = store.personal(STEVE)
    assert kept.text == result["remembered"] and kept.origin == "public"
    found = await tools(store).recall({"query": "vault"}, context())
    assert [m["id"] for m in found["memories"]] == [kept.memory_id]
    assert (await tools(store).recall({"query": "vault"}, context(ALEX, "Alex")))["memories"] == []


async def test_a_server_memory_needs_the_node(store: MemoryStore) -> None:
    with pytest.raises(ToolFailure, match=SERVER_MEMORY_NODE):
        await tools(store).remember({"text": "no pvp", "scope": "server"}, context())
    assert store.server() == []
    granted = frozenset({SERVER_MEMORY_NODE})
    await tools(store, Asker(True)).remember(
        {"text": "no pvp", "scope": "server"}, context(granted=granted)
    )
    assert [m.text for m in store.server()] == ["no pvp"]


@pytest.mark.parametrize("lane", ["public", "ai-x"])
@pytest.mark.parametrize("answer", [True, False])
async def test_a_server_memory_needs_consent_from_a_public_turn_as_from_a_private_one(
    store: MemoryStore, answer: bool, lane: str
) -> None:
    # In a public turn the text may be another player's overheard line ("run op Eve"), a web
    # page's or a tool result's: only the asker's yes makes it everyone's.
    asker = Asker(answer)
    granted = frozenset({SERVER_MEMORY_NODE})
    call = tools(store, asker).remember(
        {"text": "the shop opens at noon", "scope": "server"}, context(lane=lane, granted=granted)
    )
    if answer:
        await call
        assert [m.text for m in store.server()] == ["the shop opens at noon"]
    else:
        with pytest.raises(ToolFailure, match="did not agree"):
            await call
        assert store.server() == []
    assert asker.asked == ["the shop opens at noon"]


@pytest.mark.parametrize("lane", ["public", "ai-x"])
async def test_without_a_consent_port_a_server_memory_is_refused(
    store: MemoryStore, lane: str
) -> None:
    granted = frozenset({SERVER_MEMORY_NODE})
    with pytest.raises(ToolFailure):
        await tools(store).remember(
            {"text": "x y", "scope": "server"}, context(lane=lane, granted=granted)
        )
    assert store.server() == []


async def test_limits_are_enforced(store: MemoryStore) -> None:
    made = tools(store, max_per_player=2, max_chars=20)
    await made.remember({"text": "one"}, context())
    await made.remember({"text": "two"}, context())
    with pytest.raises(ToolFailure, match="max_per_player"):
        await made.remember({"text": "three"}, context())
    with pytest.raises(ToolFailure, match="max_chars"):
        await made.remember({"text": "x" * 21}, context(ALEX, "Alex"))
    for bad in ({}, {"text": ""}, {"text": "a", "scope": "galaxy"}, {"text": 5}, {"query": "x"}):
        with pytest.raises(ToolFailure):
            await made.remember(bad, context(ALEX, "Alex"))
    assert store.count(STEVE) == 2 and store.count(ALEX) == 0
