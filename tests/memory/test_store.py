"""The memories table on both backends (a real SQLite file, a real PostgreSQL database): the
owner is a hard filter of every search, forgetting deletes from the index too, and hostile
questions are words, never query syntax."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from bridge.errors import StoreError
from bridge.memory.conversations import IndexedArchive
from bridge.memory.records import SERVER_OWNER, Memory, Scope, new_memory_id
from bridge.memory.store import MemoryStore
from bridge.store.archive import ArchivedTurn
from tests.storage_backends import Backend

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
STEVE = "00000000-0000-0000-0000-00000000000s"
ALEX = "00000000-0000-0000-0000-00000000000a"


def memory(text: str, owner: str = STEVE, scope: Scope = "personal", name: str = "Steve") -> Memory:
    return Memory(
        memory_id=new_memory_id(),
        scope=scope,
        owner_uuid=owner if scope == "personal" else SERVER_OWNER,
        owner_name=name,
        text=text,
        source="tool",
        created_at=NOW,
    )


@pytest.fixture
def store(backend: Backend) -> Iterator[MemoryStore]:
    with MemoryStore(backend.target.open_state()) as opened:
        yield opened


def texts(found: list[object]) -> list[str]:
    return [hit.memory.text for hit in found]  # type: ignore[attr-defined]


def test_a_personal_memory_is_found_only_by_its_owner(store: MemoryStore) -> None:
    store.add(memory("my base is at 120 64 -300"))
    store.add(memory("the shop is run by Alex", scope="server"))
    steve = store.search("where is my base?", asker_uuid=STEVE, limit=5)
    alex = store.search("where is my base? base base 120 64 -300", asker_uuid=ALEX, limit=5)
    assert texts(steve) == ["my base is at 120 64 -300"]
    assert alex == []  # not ranked low: not there at all
    assert texts(store.search("who runs the shop", asker_uuid=ALEX, limit=5)) == [
        "the shop is run by Alex"
    ]


def test_the_owner_is_the_uuid_so_a_renamed_player_keeps_theirs(store: MemoryStore) -> None:
    store.add(memory("likes birch wood", name="Steve"))
    store.add(memory("plays at night", name="Steve2"))
    assert texts(store.search("birch", asker_uuid=STEVE, limit=5)) == ["likes birch wood"]
    assert [m.text for m in store.personal(STEVE)] == ["likes birch wood", "plays at night"]
    assert store.owners_named("steve2") == [STEVE]
    assert store.personal(ALEX) == []
    # Another player takes the name: a reader by name is shown both, the latest writer first.
    store.add(memory("hides diamonds", owner=ALEX, name="Steve"))
    assert store.owners_named("STEVE") == [ALEX, STEVE]


def test_the_best_match_comes_first_and_the_limit_holds(store: MemoryStore) -> None:
    store.add(memory("the nether portal is near spawn", scope="server"))
    store.add(memory("the end portal stronghold is at 900 30 -1200", scope="server"))
    store.add(memory("diamonds are rare", scope="server"))
    found = store.search("where is the end portal stronghold", asker_uuid=ALEX, limit=2)
    assert texts(found)[0] == "the end portal stronghold is at 900 30 -1200"
    assert len(found) == 2
    assert found[0].score >= found[1].score


def test_forget_removes_the_memory_from_the_index_too(backend: Backend, store: MemoryStore) -> None:
    kept = memory("my password hint is zebra")
    other = memory("zebra farm at 10 70 10", owner=ALEX, name="Alex")
    store.add(kept)
    store.add(other)
    # Alex cannot forget Steve's memory by naming its id.
    assert store.forget(kept.memory_id, owner_uuid=ALEX) is None
    gone = store.forget(kept.memory_id, owner_uuid=STEVE)
    assert gone is not None and gone.text == kept.text
    assert store.search("zebra", asker_uuid=STEVE, limit=5) == []
    if backend.is_postgres:
        rows = backend.execute(
            "SELECT count(*) FROM memories WHERE search @@ to_tsquery('simple', 'hint')"
        )
    else:
        rows = backend.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'hint'")
    assert rows == [(0,)]
    assert texts(store.search("zebra", asker_uuid=ALEX, limit=5)) == ["zebra farm at 10 70 10"]


def test_forget_all_deletes_every_personal_memory_of_one_player(store: MemoryStore) -> None:
    for n in range(3):
        store.add(memory(f"note number {n} about ores"))
    store.add(memory("ores are at y -58", owner=ALEX, name="Alex"))
    store.add(memory("ore rules: no xray", scope="server"))
    assert store.count(STEVE) == 3
    assert store.forget_all(STEVE) == 3
    assert store.count(STEVE) == 0
    assert store.search("note ores", asker_uuid=STEVE, limit=5) == []
    assert store.count(ALEX) == 1
    assert len(store.server()) == 1


@pytest.mark.parametrize(
    "question",
    [
        'base" OR owner_uuid:*',
        "NEAR(base 120) AND NOT",
        "' | !base & (",
        "base*",
        ")(\\\"';--",
        "",
        "  ",
        "营地在哪里",
        "x" * 5000,
    ],
)
def test_hostile_questions_are_only_words(store: MemoryStore, question: str) -> None:
    store.add(memory("my base is at 120 64 -300"))
    store.add(memory("营地在哪里 is the chinese question", owner=ALEX, name="Alex"))
    found = store.search(question, asker_uuid=STEVE, limit=5)
    assert all(hit.memory.owner_uuid == STEVE for hit in found)


def test_workspace_memories_are_replaced_whole(store: MemoryStore) -> None:
    workspace = memory("pvp is off in spawn", scope="server")
    store.replace_source("workspace", [dataclass_with(workspace, source="workspace")])
    store.add(memory("the model wrote this server fact", scope="server"))
    store.replace_source("workspace", [])
    assert [m.text for m in store.server()] == ["the model wrote this server fact"]
    assert store.search("pvp spawn", asker_uuid=STEVE, limit=5) == []


def test_a_server_memory_cannot_have_an_owner(store: MemoryStore) -> None:
    bad = Memory(
        memory_id=new_memory_id(),
        scope="server",
        owner_uuid=STEVE,
        owner_name="Steve",
        text="x",
        source="tool",
        created_at=NOW,
    )
    with pytest.raises(StoreError):
        store.add(bad)
    assert store.server() == []


def test_memories_survive_reopening(backend: Backend) -> None:
    with MemoryStore(backend.target.open_state()) as first:
        first.add(memory("kept across restarts"))
    with MemoryStore(backend.target.open_state()) as second:
        assert texts(second.search("restarts", asker_uuid=STEVE, limit=5)) == [
            "kept across restarts"
        ]


def dataclass_with(value: Memory, **changes: object) -> Memory:
    import dataclasses

    return dataclasses.replace(value, **changes)  # type: ignore[arg-type]


def test_an_index_of_the_first_version_is_rebuilt_with_its_owners(tmp_path: object) -> None:
    import sqlite3
    from pathlib import Path

    from bridge.store.database import SqliteDatabase

    assert isinstance(tmp_path, Path)
    path = tmp_path / "m.sqlite3"
    with MemoryStore(SqliteDatabase(path)) as store:
        store.add(memory("an old note about the lighthouse"))
        store.add(memory("Alex's lighthouse", owner=ALEX, name="Alex"))
    # Back to the first version's index, as a bridge of that version left it.
    conn = sqlite3.connect(path)
    conn.executescript(
        "DROP TABLE memories_fts;"
        "CREATE VIRTUAL TABLE memories_fts USING fts5(text);"
        "INSERT INTO memories_fts (rowid, text) SELECT seq, text FROM memories;"
        "ALTER TABLE memories DROP COLUMN embedding;"
        "ALTER TABLE memories DROP COLUMN embedding_model;"
        "ALTER TABLE memories DROP COLUMN shared;"
        "DELETE FROM schema_migrations WHERE schema_name = 'memories' AND version >= 2;"
    )
    conn.close()
    with MemoryStore(SqliteDatabase(path)) as store:
        assert texts(store.search("lighthouse", asker_uuid=STEVE, limit=5)) == [
            "an old note about the lighthouse"
        ]


def conversation(text: str, owner: str) -> Memory:
    return Memory(
        memory_id=new_memory_id(),
        scope="conversation",
        owner_uuid=owner,
        owner_name="Steve",
        text=text,
        source="archive",
        created_at=NOW,
    )


def test_conversations_are_found_by_their_lane_owner_and_public_ones_by_all(
    store: MemoryStore,
) -> None:
    from bridge.memory.records import SCOPES

    store.add(conversation("Steve: where did I hide the lighthouse key", STEVE))
    store.add(conversation("Alex: the lighthouse is at the coast", SERVER_OWNER))
    steve = texts(store.search("lighthouse", asker_uuid=STEVE, limit=5, scopes=SCOPES))
    alex = texts(store.search("lighthouse key", asker_uuid=ALEX, limit=5, scopes=SCOPES))
    assert sorted(steve) == [
        "Alex: the lighthouse is at the coast",
        "Steve: where did I hide the lighthouse key",
    ]
    assert alex == ["Alex: the lighthouse is at the coast"]
    # Automatic recall searches memories only.
    assert store.search("lighthouse", asker_uuid=STEVE, limit=5) == []
    assert store.personal(STEVE) == []


def index_holds(backend: Backend, word: str) -> int:
    """Rows of every index that still hold ``word``: the keyword index and the vectors."""
    if backend.is_postgres:
        rows = backend.execute(
            f"SELECT count(*) FROM memories WHERE search @@ to_tsquery('simple', '{word}')"
        )
    else:
        rows = backend.execute(
            f"SELECT count(*) FROM memories_fts WHERE memories_fts MATCH '{word}'"
        )
    vectors = backend.execute(
        f"SELECT count(*) FROM memories WHERE embedding IS NOT NULL AND text LIKE '%{word}%'"
    )
    return int(rows[0][0]) + int(vectors[0][0])


def lane_entry(text: str, owner: str, lane: str) -> Memory:
    entry = conversation(text, owner)
    return Memory(**{**{f: getattr(entry, f) for f in entry.__slots__}, "origin": lane})


def test_forget_all_removes_the_players_conversation_entries_from_every_index(
    backend: Backend, store: MemoryStore
) -> None:
    store.add(memory("my locker code is quokka"))
    store.add(lane_entry("Steve: the locker code is quokka assistant: noted", STEVE, "ai-1"))
    store.add(lane_entry("Steve: quokka again assistant: yes", STEVE, "ai-2"))
    store.add(lane_entry("Alex: I saw a quokka assistant: nice", ALEX, "ai-1"))
    store.add(conversation("Steve: public quokka talk assistant: hi", SERVER_OWNER))
    ids = [m.memory_id for m in store.personal(STEVE)] + [
        m.memory_id for m in store.conversations(STEVE)
    ]
    store.set_embeddings("m", [(memory_id, [1.0, 0.0]) for memory_id in ids])
    assert index_holds(backend, "quokka") == 5 + 3
    assert store.forget_all(STEVE) == 3
    left = store.search("quokka", asker_uuid=STEVE, limit=5, scopes=("personal", "conversation"))
    assert [hit.memory.owner_uuid for hit in left] == [SERVER_OWNER]
    # What is left: Alex's private entry (not Steve's to forget) and the public turn.
    assert index_holds(backend, "quokka") == 2
    assert store.conversations(STEVE) == []
    assert len(store.conversations(ALEX)) == 1


def test_a_player_forgets_one_conversation_entry_or_one_conversation(
    backend: Backend, store: MemoryStore
) -> None:
    one = lane_entry("Steve: wombat one assistant: ok", STEVE, "ai-1")
    two = lane_entry("Steve: wombat two assistant: ok", STEVE, "ai-2")
    three = lane_entry("Steve: wombat three assistant: ok", STEVE, "ai-2")
    alex = lane_entry("Alex: wombat assistant: ok", ALEX, "ai-2")
    for entry in (one, two, three, alex):
        store.add(entry)
    assert store.forget(one.memory_id, owner_uuid=ALEX) is None
    gone = store.forget(one.memory_id, owner_uuid=STEVE)
    assert gone is not None and gone.scope == "conversation"
    # One indexed before entries carried their lane: its origin is the lane's session id.
    older = lane_entry("Steve: wombat four assistant: ok", STEVE, "ai-2.s-older")
    other_lane = lane_entry("Steve: wombat five assistant: ok", STEVE, "ai-2-3.s-x")
    store.add(older)
    store.add(other_lane)
    assert store.forget_conversation(STEVE, "ai-2") == 3
    assert [m.origin for m in store.conversations(STEVE)] == ["ai-2-3.s-x"]
    assert index_holds(backend, "wombat") == 2  # Alex's, and Steve's other conversation


def archived(*items: dict[str, object]) -> ArchivedTurn:
    return ArchivedTurn(
        turn_id="t-" + new_memory_id(),
        session_id="s-1",
        player="Steve",
        started_at=NOW,
        ended_at=NOW,
        model_ref="local/m",
        control_version="cp-1",
        items=tuple(items),
    )


ASKED = {"kind": "player", "player": "Steve", "text": "where am I? my locker is 4711"}
SNAPSHOT = {"kind": "tool_result", "call_id": "c1", "output": "{}", "personal": True}
ANSWERED = {"kind": "assistant_text", "text": "at 120 64 -35"}


def test_a_public_turn_that_took_a_personal_result_is_not_indexed_for_everyone(
    backend: Backend, store: MemoryStore
) -> None:
    public = IndexedArchive(MemoryArchiveStub(), store, None, lane_id="public")
    public.append(archived(ASKED, SNAPSHOT, ANSWERED))
    public.append(archived({"kind": "player", "player": "Steve", "text": "hi all"}, ANSWERED))
    private = IndexedArchive(MemoryArchiveStub(), store, STEVE, lane_id="ai-2")
    private.append(archived(ASKED, SNAPSHOT, ANSWERED))
    assert index_holds(backend, "4711") == 1  # Steve's own private entry only
    found = store.search("locker 4711", asker_uuid=ALEX, limit=5, scopes=("conversation",))
    assert found == []
    [entry] = store.conversations(STEVE)
    assert entry.origin == "ai-2"
    assert store.forget_conversation(STEVE, "ai-2") == 1


class MemoryArchiveStub:
    def append(self, turn: ArchivedTurn) -> None:
        pass


def test_forgetting_a_memory_forgets_the_owners_turns_that_said_it(
    backend: Backend, store: MemoryStore
) -> None:
    kept = memory("Steve's locker code is quokka 4711")
    store.add(kept)
    said = lane_entry("Steve: remember my locker code quokka 4711 assistant: kept", STEVE, "ai-1")
    other = lane_entry("Steve: the quokka farm assistant: nice", STEVE, "ai-1")
    alex = lane_entry("Alex: my locker code is quokka 4711 too assistant: ok", ALEX, "ai-9")
    public = conversation("Steve: locker code quokka 4711 assistant: hm", SERVER_OWNER)
    for entry in (said, other, alex, public):
        store.add(entry)
    gone = store.forget(kept.memory_id, owner_uuid=STEVE)
    assert gone is not None
    assert [m.memory_id for m in store.conversations(STEVE)] == [other.memory_id]
    assert index_holds(backend, "4711") == 2  # Alex's own and the public turn's


def test_a_memory_an_operator_or_the_console_forgets_takes_the_turns_that_said_it(
    backend: Backend, store: MemoryStore
) -> None:
    """Forgotten by whoever may (``owner_uuid=None``: an operator's ``forget <id>``, the
    console's Forget): the owner's entries that said it go too, on every index."""
    kept = memory("Steve's locker code is quokka 4711")
    said = lane_entry("Steve: remember my locker code quokka 4711 assistant: kept", STEVE, "ai-1")
    for entry in (kept, said):
        store.add(entry)
    store.set_embeddings("m", [(m.memory_id, [1.0, 0.0]) for m in (kept, said)])
    assert index_holds(backend, "quokka") == 4
    assert store.forget(kept.memory_id, owner_uuid=None) is not None
    assert store.conversations(STEVE) == []
    assert index_holds(backend, "quokka") == 0
