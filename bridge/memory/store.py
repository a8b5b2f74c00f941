"""The memories table and its keyword index, on the bridge's database (`bridge.store`).

SQLite: the rows in ``memories`` and their words in an FTS5 table (``memories_fts``, rowid =
the row's ``seq``), written and deleted in the same transaction as the row, ranked by BM25.
PostgreSQL: a generated ``tsvector`` column (the ``simple`` configuration: no stemming, as
FTS5's ``unicode61``) under a GIN index, ranked by ``ts_rank_cd``. Deleting a row deletes its
words from the index with it, so ``forget`` leaves nothing findable behind.

Every read that can return a personal memory names its owner by UUID in the SQL: a search
returns the asker's personal memories and the server's, never another player's, whatever the
ranking would say. Calls are synchronous and short; the recall and the tools run them in a
worker thread. The store owns its `Database` and closes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from bridge.errors import StoreError
from bridge.memory.forgotten import MENTION_SHARE, RecentlyForgotten, mentions
from bridge.memory.query import fts5_query, terms_of, tsquery
from bridge.memory.ranking import bm25_scores
from bridge.memory.records import (
    MEMORY_SCOPES,
    SCOPES,
    SERVER_OWNER,
    Found,
    Memory,
    Scope,
    Source,
)
from bridge.memory.vectors import cosine, hybrid, pack, unpack
from bridge.store.database import Database, DatabaseError, Params, Row, Transaction
from bridge.store.migrations import Migration, Schema, open_migrated

_COLUMNS = (
    "memory_id TEXT NOT NULL UNIQUE, scope TEXT NOT NULL, owner_uuid TEXT NOT NULL,"
    " owner_name TEXT NOT NULL, text TEXT NOT NULL, source TEXT NOT NULL,"
    " origin TEXT NOT NULL, created_at TEXT NOT NULL"
)
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS memories_by_owner ON memories (owner_uuid, scope, seq)",
    "CREATE INDEX IF NOT EXISTS memories_by_source ON memories (source, scope)",
)

# The owner as one token of the index's owner column: "o" and the UUID's hex digits, or
# "oserver" for a server memory (the tokenizer would split a UUID at its hyphens).
_OWNER_TOKEN = (
    "CASE WHEN scope = 'server' THEN 'oserver' ELSE 'o' || REPLACE(owner_uuid, '-', '') END"
)
# The same for rows written since conversations are indexed: a public conversation's owner is
# "opublic". (Migration 2 keeps its own expression: it shipped before the scope existed.)
_OWNER_TOKEN_NOW = (
    "CASE WHEN scope = 'server' THEN 'oserver' WHEN owner_uuid = '' THEN 'opublic'"
    " ELSE 'o' || REPLACE(owner_uuid, '-', '') END"
)
_FTS_WITH_OWNER = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5("
    "text, owner, tokenize = 'unicode61 remove_diacritics 2')"
)

_BY_SCOPE = "CREATE INDEX IF NOT EXISTS memories_by_scope ON memories (scope, owner_uuid)"

SCHEMA = Schema(
    "memories",
    (
        Migration(
            1,
            "memories and their keyword index",
            sqlite=(
                f"CREATE TABLE IF NOT EXISTS memories (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
                f" {_COLUMNS})",
                *_INDEXES,
                "CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5("
                "text, tokenize = 'unicode61 remove_diacritics 2')",
            ),
            postgresql=(
                f"CREATE TABLE IF NOT EXISTS memories (seq BIGSERIAL PRIMARY KEY, {_COLUMNS},"
                " search tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED)",
                *_INDEXES,
                "CREATE INDEX IF NOT EXISTS memories_search ON memories USING GIN (search)",
            ),
        ),
        # A search reads only what the asker may see: on SQLite the postings of the asker and
        # of the server (an AND in the MATCH), on PostgreSQL their rows by the scope index,
        # instead of every memory holding a common word (bench/memory_bench.py).
        Migration(
            2,
            "the keyword index holds each memory's owner; memories by scope and owner",
            sqlite=(
                "DROP TABLE IF EXISTS memories_fts",
                _FTS_WITH_OWNER,
                "INSERT INTO memories_fts (rowid, text, owner)"
                f" SELECT seq, text, {_OWNER_TOKEN} FROM memories",
                _BY_SCOPE,
            ),
            postgresql=(_BY_SCOPE,),
        ),
        Migration(
            3,
            "each memory's vector and the embedding model that made it",
            sqlite=(
                "ALTER TABLE memories ADD COLUMN embedding BLOB",
                "ALTER TABLE memories ADD COLUMN embedding_model TEXT NOT NULL DEFAULT ''",
            ),
            postgresql=(
                "ALTER TABLE memories ADD COLUMN IF NOT EXISTS embedding real[]",
                "ALTER TABLE memories ADD COLUMN IF NOT EXISTS"
                " embedding_model TEXT NOT NULL DEFAULT ''",
            ),
        ),
        # A personal memory its owner shared (/mineclaw memory share) may be recalled into
        # their public turns; the others never are.
        Migration(
            4,
            "whether a personal memory was shared by its owner",
            sqlite=("ALTER TABLE memories ADD COLUMN shared INTEGER NOT NULL DEFAULT 0",),
            postgresql=(
                "ALTER TABLE memories ADD COLUMN IF NOT EXISTS shared INTEGER NOT NULL DEFAULT 0",
            ),
        ),
    ),
)

_SELECT = (
    "SELECT m.memory_id, m.scope, m.owner_uuid, m.owner_name, m.text, m.source,"
    " m.created_at, m.origin, m.shared"
)
_VISIBLE_ROWS = (
    "SELECT * FROM memories WHERE scope IN ('personal', 'conversation') AND owner_uuid = ?"
    " UNION ALL SELECT * FROM memories WHERE scope = 'server'"
    " UNION ALL SELECT * FROM memories WHERE scope = 'conversation' AND owner_uuid = ''"
)
"""Every row the asker (the one parameter) may see, each part read by the scope index."""
MAX_CANDIDATES = 5000
"""The most matches of one search that are ranked (a player has at most
``memory.max_per_player`` memories; the rest are the server's)."""
# The hard filter: the asker's own personal memories, and the server's.
# Personal rows and private conversations always have an owner, server rows and public
# conversations never do.
_VISIBLE = (
    "(m.owner_uuid = ? OR m.scope = 'server' OR (m.scope = 'conversation' AND m.owner_uuid = ''))"
)
_PUBLIC = "(m.scope = 'server' OR m.owner_uuid = '' OR m.shared = 1)"
"""What a public turn may carry: the server's memories, public conversations, and the personal
memories their owner shared; never a private conversation nor an unshared personal memory."""
_OWN = "m.scope IN ('personal', 'conversation') AND m.owner_uuid = ?"
"""A player's own rows: their personal memories and their private conversations' entries."""


class MemoryStore:
    """The memories in ``database`` (migrated on open), which the store then owns."""

    def __init__(self, database: Database) -> None:
        self._db = open_migrated(database, SCHEMA, label="memories")
        self.recently_forgotten = RecentlyForgotten()
        """The forgets a turn still running when they happened must honour when it is indexed
        (`bridge.memory.conversations`)."""

    @property
    def database(self) -> Database:
        return self._db

    @property
    def dialect(self) -> str:
        return self._db.dialect

    # ---- writing

    def add(self, memory: Memory) -> None:
        """Store ``memory`` and index its words, in one transaction."""
        self.add_many((memory,))

    def add_many(self, memories: Sequence[Memory]) -> None:
        try:
            with self._db.transaction() as tx:
                for memory in memories:
                    self._insert(tx, memory)
        except DatabaseError as exc:
            raise StoreError(f"cannot store a memory: {exc}") from exc

    def _insert(self, tx: Transaction, memory: Memory) -> None:
        owned = memory.owner_uuid != SERVER_OWNER
        if (memory.scope == "server" and owned) or (memory.scope == "personal" and not owned):
            raise StoreError("a server memory has no owner and a personal one has one")
        params = (
            memory.memory_id,
            memory.scope,
            memory.owner_uuid,
            memory.owner_name,
            memory.text,
            memory.source,
            memory.origin,
            _timestamp(memory.created_at),
            1 if memory.shared and memory.scope == "personal" else 0,
        )
        insert = (
            "INSERT INTO memories (memory_id, scope, owner_uuid, owner_name, text, source,"
            " origin, created_at, shared) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        )
        tx.execute(insert, params)
        if self._db.dialect == "sqlite":
            tx.execute(
                "INSERT INTO memories_fts (rowid, text, owner)"
                f" SELECT seq, text, {_OWNER_TOKEN_NOW} FROM memories WHERE memory_id = ?",
                (memory.memory_id,),
            )

    def forget(self, memory_id: str, *, owner_uuid: str | None) -> Memory | None:
        """Delete one memory or conversation entry, from the index and the vectors too; what
        was deleted, or None when there is none by that id (among ``owner_uuid``'s personal
        memories and private conversations; None: any, for operators and the console). A
        personal memory takes with it its owner's conversation entries that said it
        (`forget_mentions`), whoever forgets it: recall must not bring back what was
        forgotten."""
        where = "m.memory_id = ?"
        params: list[object] = [memory_id]
        if owner_uuid is not None:
            where += f" AND {_OWN}"
            params.append(owner_uuid)
        gone = self._delete(where, params)
        if not gone:
            return None
        if gone[0].scope == "personal":
            self.recently_forgotten.forgot(gone[0].owner_uuid, gone[0].text, datetime.now(UTC))
            self.forget_mentions(gone[0].owner_uuid, gone[0].text)
        return gone[0]

    def forget_all(self, owner_uuid: str) -> int:
        """Delete every personal memory of ``owner_uuid`` and every entry of their private
        conversations (the conversation index); how many there were."""
        self.recently_forgotten.forgot_everything(owner_uuid, datetime.now(UTC))
        return len(self._delete(_OWN, [owner_uuid]))

    def forget_conversation(self, owner_uuid: str, lane_id: str) -> int:
        """Delete the index entries of one of ``owner_uuid``'s private conversations (its
        lane); how many there were. Entries indexed before they carried their lane carry the
        session's id, which starts with the lane's and a dot (`bridge.turns.lanes`)."""
        where = (
            "m.scope = 'conversation' AND m.owner_uuid = ?"
            " AND (m.origin = ? OR substr(m.origin, 1, ?) = ?)"
        )
        return len(self._delete(where, [owner_uuid, lane_id, len(lane_id) + 1, f"{lane_id}."]))

    def forget_mentions(self, owner_uuid: str, text: str, *, share: float = MENTION_SHARE) -> int:
        """Delete ``owner_uuid``'s conversation entries that hold at least ``share`` of the
        words of ``text`` (a forgotten memory: the turns that said it); how many there were.
        Only their own private conversations' entries are looked at."""
        if not terms_of(text):
            return 0
        found = self.search(
            text, asker_uuid=owner_uuid, limit=MAX_CANDIDATES, scopes=("conversation",)
        )
        gone = 0
        for hit in found:
            entry = hit.memory
            if entry.owner_uuid != owner_uuid:
                continue  # a public turn: nobody's to forget
            if mentions(text, entry.text, share):
                gone += self.forget(entry.memory_id, owner_uuid=owner_uuid) is not None
        return gone

    def share(self, memory_id: str, owner_uuid: str, *, shared: bool) -> Memory | None:
        """Mark one of ``owner_uuid``'s personal memories shared (recalled into their public
        turns too) or not; the memory, or None when they have none by that id."""
        try:
            with self._db.transaction() as tx:
                tx.execute(
                    "UPDATE memories SET shared = ? WHERE memory_id = ? AND scope = 'personal'"
                    " AND owner_uuid = ?",
                    (1 if shared else 0, memory_id, owner_uuid),
                )
                rows = tx.query(
                    f"{_SELECT} FROM memories m WHERE m.memory_id = ? AND m.scope = 'personal'"
                    " AND m.owner_uuid = ?",
                    (memory_id, owner_uuid),
                )
        except DatabaseError as exc:
            raise StoreError(f"cannot share a memory: {exc}") from exc
        return _memory(rows[0]) if rows else None

    def replace_source(self, source: Source, memories: Sequence[Memory]) -> None:
        """Make the server memories written by ``source`` exactly ``memories`` (the workspace
        files, read again at start and on every reload), in one transaction."""
        try:
            with self._db.transaction() as tx:
                if self._db.dialect == "sqlite":
                    tx.execute(
                        "DELETE FROM memories_fts WHERE rowid IN"
                        " (SELECT seq FROM memories WHERE source = ? AND scope = 'server')",
                        (source,),
                    )
                tx.execute("DELETE FROM memories WHERE source = ? AND scope = 'server'", (source,))
                for memory in memories:
                    self._insert(tx, memory)
        except DatabaseError as exc:
            raise StoreError(f"cannot store the {source} memories: {exc}") from exc

    def _delete(self, where: str, params: Sequence[object]) -> list[Memory]:
        try:
            with self._db.transaction() as tx:
                rows = tx.query(f"{_SELECT}, m.seq FROM memories m WHERE {where}", params)
                seqs = [row[-1] for row in rows]
                for seq in seqs:
                    if self._db.dialect == "sqlite":
                        tx.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
                    tx.execute("DELETE FROM memories WHERE seq = ?", (seq,))
        except DatabaseError as exc:
            raise StoreError(f"cannot forget memories: {exc}") from exc
        return [_memory(row[:-1]) for row in rows]

    # ---- reading

    def personal(self, owner_uuid: str) -> list[Memory]:
        """``owner_uuid``'s personal memories, oldest first."""
        return self._read(
            "WHERE m.scope = 'personal' AND m.owner_uuid = ? ORDER BY m.seq", (owner_uuid,)
        )

    def conversations(self, owner_uuid: str, *, limit: int = 1000) -> list[Memory]:
        """The index entries of ``owner_uuid``'s private conversations, newest first."""
        return self._read(
            "WHERE m.scope = 'conversation' AND m.owner_uuid = ? ORDER BY m.seq DESC LIMIT ?",
            (owner_uuid, limit),
        )

    def server(self) -> list[Memory]:
        """The server memories, oldest first."""
        return self._read("WHERE m.scope = 'server' ORDER BY m.seq", ())

    def everything(self, *, limit: int = 1000, offset: int = 0) -> list[Memory]:
        """Every memory, newest first, a page at a time (the owner's views: the console)."""
        return self._read("ORDER BY m.seq DESC LIMIT ? OFFSET ?", (limit, offset))

    def count(self, owner_uuid: str) -> int:
        """How many personal memories ``owner_uuid`` has."""
        rows = self._query(
            "SELECT COUNT(*) FROM memories m WHERE m.scope = 'personal' AND m.owner_uuid = ?",
            (owner_uuid,),
        )
        return int(rows[0][0])

    def owners_named(self, name: str) -> list[str]:
        """The UUIDs of every player who wrote a personal memory as ``name`` (any case), the
        latest writer first: a name is not who a player is (renamed, or taken by another), so
        a reader is shown each of them, never one picked by the name last written."""
        rows = self._query(
            "SELECT m.owner_uuid, MAX(m.seq) AS latest FROM memories m"
            " WHERE m.scope = 'personal' AND LOWER(m.owner_name) = LOWER(?)"
            " GROUP BY m.owner_uuid ORDER BY latest DESC",
            (name,),
        )
        return [str(row[0]) for row in rows]

    def search(
        self,
        question: str,
        *,
        asker_uuid: str,
        limit: int,
        scopes: Sequence[Scope] = MEMORY_SCOPES,
        public: bool = False,
    ) -> list[Found]:
        """The memories that best match ``question`` among those ``asker_uuid`` may see
        (their own personal ones, the server's; with ``conversation`` in ``scopes``, the
        archived turns of their own private lanes and the public turns), best first, at most
        ``limit``. ``public``: for a public turn, only what everyone may read (`_PUBLIC`)."""
        terms = terms_of(question)
        if not terms or limit <= 0 or not scopes:
            return []
        scoped = _scoped(scopes, public=public)
        if self._db.dialect == "sqlite":
            owners = []
            if "personal" in scopes or "conversation" in scopes:
                owners.append("o" + asker_uuid.replace("-", ""))
            if "server" in scopes:
                owners.append("oserver")
            if "conversation" in scopes:
                owners.append("opublic")
            # The owner twice: in the MATCH, so only those postings are read, and in the
            # WHERE, the same filter as on PostgreSQL.
            sql = (
                f"{_SELECT} FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid"
                f" WHERE memories_fts MATCH ? AND {_VISIBLE} AND {scoped}"
                f" LIMIT {MAX_CANDIDATES}"
            )
            rows = self._query(sql, (fts5_query(terms, tuple(owners)), asker_uuid))
            candidates = [_memory(row) for row in rows]
            scores = bm25_scores(terms, [m.text for m in candidates], self._visible(asker_uuid))
            ranked = sorted(
                zip(candidates, scores, strict=True), key=lambda pair: pair[1], reverse=True
            )
            return [Found(memory, score) for memory, score in ranked[:limit]]
        sql = postgresql_search(scoped)
        rows = self._query(sql, (asker_uuid, tsquery(terms), asker_uuid, limit))
        return [Found(_memory(row[:-1]), float(row[-1])) for row in rows]

    # ---- vectors (bridge.memory.embeddings)

    def unembedded(self, model: str, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` (memory id, text) pairs without a vector of ``model``, oldest first."""
        rows = self._query(
            "SELECT memory_id, text FROM memories WHERE embedding_model <> ? ORDER BY seq LIMIT ?",
            (model, limit),
        )
        return [(str(memory_id), str(text)) for memory_id, text in rows]

    def embedded_count(self, model: str) -> tuple[int, int]:
        """(memories with a vector of ``model``, all memories)."""
        rows = self._query(
            "SELECT (SELECT COUNT(*) FROM memories WHERE embedding_model = ?),"
            " (SELECT COUNT(*) FROM memories)",
            (model,),
        )
        return int(rows[0][0]), int(rows[0][1])

    def set_embeddings(self, model: str, vectors: Sequence[tuple[str, Sequence[float]]]) -> None:
        """Store each memory's vector of ``model`` (a memory forgotten meanwhile is skipped)."""
        rows = [
            (pack(vector) if self._db.dialect == "sqlite" else list(vector), model, memory_id)
            for memory_id, vector in vectors
        ]
        try:
            with self._db.transaction() as tx:
                tx.executemany(
                    "UPDATE memories SET embedding = ?, embedding_model = ? WHERE memory_id = ?",
                    rows,
                )
        except DatabaseError as exc:
            raise StoreError(f"cannot store memory vectors: {exc}") from exc

    def ranked(
        self,
        question: str,
        vector: Sequence[float],
        model: str,
        *,
        asker_uuid: str,
        limit: int,
        scopes: Sequence[Scope] = MEMORY_SCOPES,
        public: bool = False,
    ) -> list[Found]:
        """The hybrid search: every memory the asker may see that has a vector of ``model``,
        scored by its similarity to ``vector`` and its keyword score (`bridge.memory.vectors`);
        memories the keywords found but without a vector yet are scored by keywords alone.
        Each hit keeps its cosine ``similarity`` (the recall's floor reads it)."""
        keyword = {
            hit.memory.memory_id: hit
            for hit in self.search(
                question, asker_uuid=asker_uuid, limit=MAX_CANDIDATES, scopes=scopes, public=public
            )
        }
        best = max((hit.score for hit in keyword.values()), default=0.0)
        # The visible rows by the scope index (an OR over the table would read all of it).
        rows = self._query(
            f"{_SELECT}, m.embedding FROM ({_VISIBLE_ROWS}) m WHERE {_VISIBLE}"
            f" AND {_scoped(scopes, public=public)} AND m.embedding_model = ?",
            (asker_uuid, asker_uuid, model),
        )
        scored: dict[str, Found] = {}
        for row in rows:
            memory, stored = _memory(row[:-1]), row[-1]
            if stored is None:
                continue
            found = (
                unpack(bytes(stored)) if isinstance(stored, bytes | memoryview) else list(stored)
            )
            words = keyword.get(memory.memory_id)
            similarity = cosine(vector, found)
            score = hybrid(similarity, words.score if words else 0.0, best)
            scored[memory.memory_id] = Found(memory, score, similarity)
        for memory_id, hit in keyword.items():
            if memory_id not in scored:
                scored[memory_id] = Found(hit.memory, hybrid(0.0, hit.score, best))
        ordered = sorted(scored.values(), key=lambda found: found.score, reverse=True)
        return ordered[:limit]

    def _visible(self, asker_uuid: str) -> int:
        """How many memories ``asker_uuid`` may see (by the scope index)."""
        rows = self._query(
            "SELECT (SELECT COUNT(*) FROM memories WHERE scope = 'personal' AND owner_uuid = ?)"
            " + (SELECT COUNT(*) FROM memories WHERE scope = 'server')",
            (asker_uuid,),
        )
        return int(rows[0][0])

    def _read(self, tail: str, params: Params) -> list[Memory]:
        return [_memory(row) for row in self._query(f"{_SELECT} FROM memories m {tail}", params)]

    def _query(self, sql: str, params: Params) -> list[Row]:
        try:
            return self._db.query(sql, params)
        except DatabaseError as exc:
            raise StoreError(f"cannot read the memories: {exc}") from exc

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def postgresql_search(scoped: str) -> str:
    """The keyword search on PostgreSQL; parameters: the asker's UUID, the tsquery, the UUID
    again, the limit. The rows the asker may see come first, by the scope index (the planner
    would otherwise start from the GIN index, whose postings of a common word span every
    player); the test of its plan is in tests/memory/test_search_plan.py."""
    return (
        f"WITH visible AS MATERIALIZED ({_VISIBLE_ROWS})"
        f" {_SELECT}, ts_rank_cd(m.search, q) AS score"
        " FROM visible m, to_tsquery('simple', ?) q"
        f" WHERE m.search @@ q AND {_VISIBLE} AND {scoped}"
        " ORDER BY score DESC, m.seq DESC LIMIT ?"
    )


def _scoped(scopes: Sequence[Scope], *, public: bool) -> str:
    """The scope filter of a search (only known scope names reach the SQL)."""
    listed = ", ".join(f"'{scope}'" for scope in scopes if scope in SCOPES)
    return f"m.scope IN ({listed})" + (f" AND {_PUBLIC}" if public else "")


def _memory(row: Row) -> Memory:
    memory_id, scope, owner_uuid, owner_name, text, source, created, origin, shared = row
    return Memory(
        memory_id=str(memory_id),
        scope=scope,
        owner_uuid=str(owner_uuid),
        owner_name=str(owner_name),
        text=str(text),
        source=source,
        created_at=datetime.fromisoformat(str(created)),
        origin=str(origin),
        shared=bool(shared),
    )


def _timestamp(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise StoreError("memory timestamps must carry a timezone")
    return moment.astimezone(UTC).isoformat()
