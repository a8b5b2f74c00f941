"""What the bridge keeps per player, in the store every bridge of a network shares.

A player's private conversations (which ones, their titles, starts and last activity, the
active one and the next number), their persona choice, whether they opted out of listen mode,
the question they may ask again with ``/mineclaw retry``, and lines owed to them that no link
could carry yet. They lived in JSON files of one bridge's data folder; here (SQLite beside the
archive, or the network's PostgreSQL) any bridge that takes a server serves its players as the
last one did.

Conversations are written whole per player under a version number (``save_shelf`` refuses a
shelf read before another bridge's change: the caller reads again and redoes its change), so two
bridges serving one player on two servers never lose each other's change nor hand out the same
number twice. A deleted conversation keeps its row (``deleted_at``), so its number is never
given again, and its lane gets a tombstone (`bridge.store.sessions`): nothing restores its
turns into a session.

Calls are synchronous and small; the callers run them in a worker thread.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bridge.errors import StoreError
from bridge.store.database import Database, DatabaseError, Transaction
from bridge.store.migrations import Migration, Schema, migrate
from bridge.store.sessions import SCHEMA as SESSIONS_SCHEMA
from bridge.store.sessions import tombstone_lanes

MAX_OWED_PER_PLAYER = 50
"""Lines kept for one player at most; past it the oldest go (a player who never comes back)."""

_OWED_COLUMNS = (
    "server_id TEXT NOT NULL, player_uuid TEXT NOT NULL, line_json TEXT NOT NULL,"
    " owed_at TEXT NOT NULL"
)
_COMMON = (
    "CREATE TABLE IF NOT EXISTS player_shelves (player_uuid TEXT PRIMARY KEY,"
    " active INTEGER NOT NULL, next_id INTEGER NOT NULL, version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS player_conversations (player_uuid TEXT NOT NULL,"
    " conversation_id INTEGER NOT NULL, title TEXT, started_at TEXT NOT NULL,"
    " last_active TEXT, deleted_at TEXT, PRIMARY KEY (player_uuid, conversation_id))",
    "CREATE TABLE IF NOT EXISTS persona_choices (player_uuid TEXT PRIMARY KEY, soul TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS listen_optouts (player_uuid TEXT PRIMARY KEY)",
    "CREATE TABLE IF NOT EXISTS retry_offers (server_id TEXT NOT NULL,"
    " player_uuid TEXT NOT NULL, offer_json TEXT NOT NULL, expires_at TEXT NOT NULL,"
    " PRIMARY KEY (server_id, player_uuid))",
)
_OWED_INDEX = "CREATE INDEX IF NOT EXISTS owed_lines_by_server ON owed_lines (server_id, seq)"

SCHEMA = Schema(
    "player_state",
    (
        Migration(
            1,
            "per-player state: conversations, persona choices, listen opt-outs, retry offers,"
            " owed lines",
            sqlite=(
                *_COMMON,
                "CREATE TABLE IF NOT EXISTS owed_lines"
                f" (seq INTEGER PRIMARY KEY AUTOINCREMENT, {_OWED_COLUMNS})",
                _OWED_INDEX,
            ),
            postgresql=(
                *_COMMON,
                "CREATE TABLE IF NOT EXISTS owed_lines"
                f" (seq BIGSERIAL PRIMARY KEY, {_OWED_COLUMNS})",
                _OWED_INDEX,
            ),
        ),
    ),
)


class ShelfChanged(StoreError):
    """Another bridge changed the player's conversations since they were read: read again."""


@dataclass(frozen=True, slots=True)
class StoredConversation:
    id: int
    title: str | None
    started: datetime
    last_active: datetime | None


@dataclass(frozen=True, slots=True)
class StoredShelf:
    """A player's live conversations; ``version`` 0: never stored."""

    active: int
    next_id: int
    conversations: tuple[StoredConversation, ...]
    version: int = 0


@dataclass(frozen=True, slots=True)
class OwedLine:
    """A line a player is owed on ``server_id``: ``line`` is the JSON the caller stored."""

    seq: int
    server_id: str
    player_uuid: str
    line: dict[str, object]
    owed_at: datetime


class PlayerState:
    """The per-player tables in ``database`` (migrated on open); ``close`` closes it."""

    def __init__(self, database: Database) -> None:
        self._db = database
        migrate(database, SESSIONS_SCHEMA)  # the lane tombstones live there
        migrate(database, SCHEMA)

    @property
    def database(self) -> Database:
        return self._db

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> PlayerState:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---- conversations

    def shelf(self, player_uuid: str) -> StoredShelf | None:
        """The player's conversations as stored; None when none were ever stored."""
        with self._db.transaction() as tx:
            return _read_shelf(tx, player_uuid)

    def save_shelf(
        self, player_uuid: str, shelf: StoredShelf, deleted_lanes: Sequence[str] = ()
    ) -> int:
        """Store ``shelf`` (read at ``shelf.version``) as the player's; the new version.

        Conversations stored live but not on ``shelf`` are deleted: their rows are kept with
        ``deleted_at`` and ``deleted_lanes`` (their lanes) get a tombstone. ``next_id`` never
        goes down, nor to a number ever given. Raises `ShelfChanged` when the stored version is
        not ``shelf.version`` (another bridge changed it)."""
        try:
            return self._save_shelf(player_uuid, shelf, deleted_lanes)
        except DatabaseError as exc:
            if exc.duplicate:  # another bridge stored the player's first shelf meanwhile
                raise ShelfChanged(
                    f"the conversations of {player_uuid} changed since they were read"
                ) from exc
            raise

    def _save_shelf(
        self, player_uuid: str, shelf: StoredShelf, deleted_lanes: Sequence[str]
    ) -> int:
        now = _timestamp(datetime.now(UTC))
        # PostgreSQL: the row is locked until the commit, so a second bridge's save waits and
        # then finds the new version (SQLite's write transactions run one at a time anyway).
        lock = " FOR UPDATE" if self._db.dialect == "postgresql" else ""
        with self._db.transaction() as tx:
            rows = tx.query(
                f"SELECT version FROM player_shelves WHERE player_uuid = ?{lock}", (player_uuid,)
            )
            stored = int(rows[0][0]) if rows else 0
            if stored != shelf.version:
                raise ShelfChanged(
                    f"the conversations of {player_uuid} changed since they were read"
                )
            highest = tx.query(
                "SELECT MAX(conversation_id) FROM player_conversations WHERE player_uuid = ?",
                (player_uuid,),
            )[0][0]
            given = max(shelf.next_id, int(highest or 0) + 1)
            live = {c.id for c in shelf.conversations}
            for row in tx.query(
                "SELECT conversation_id FROM player_conversations"
                " WHERE player_uuid = ? AND deleted_at IS NULL",
                (player_uuid,),
            ):
                if int(row[0]) not in live:
                    tx.execute(
                        "UPDATE player_conversations SET deleted_at = ?"
                        " WHERE player_uuid = ? AND conversation_id = ?",
                        (now, player_uuid, int(row[0])),
                    )
            for conversation in shelf.conversations:
                _upsert_conversation(tx, player_uuid, conversation)
            version = stored + 1
            if rows:
                tx.execute(
                    "UPDATE player_shelves SET active = ?, next_id = ?, version = ?"
                    " WHERE player_uuid = ?",
                    (shelf.active, given, version, player_uuid),
                )
            else:
                tx.execute(
                    "INSERT INTO player_shelves (player_uuid, active, next_id, version)"
                    " VALUES (?, ?, ?, ?)",
                    (player_uuid, shelf.active, given, version),
                )
            tombstone_lanes(tx, deleted_lanes, now)
        return version

    def import_shelf(self, player_uuid: str, shelf: StoredShelf) -> bool:
        """Store ``shelf`` unless the player already has one stored (a file imported by
        another bridge first); whether it was stored."""
        try:
            self.save_shelf(
                player_uuid, StoredShelf(shelf.active, shelf.next_id, shelf.conversations)
            )
        except ShelfChanged:
            return False
        return True

    # ---- persona choices and listen opt-outs

    def persona_choices(self) -> dict[str, str]:
        rows = self._db.query("SELECT player_uuid, soul FROM persona_choices")
        return {str(uuid): str(soul) for uuid, soul in rows}

    def persona_choice(self, player_uuid: str) -> str | None:
        rows = self._db.query(
            "SELECT soul FROM persona_choices WHERE player_uuid = ?", (player_uuid,)
        )
        return str(rows[0][0]) if rows else None

    def choose_persona(self, player_uuid: str, soul: str | None) -> None:
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM persona_choices WHERE player_uuid = ?", (player_uuid,))
            if soul is not None:
                tx.execute(
                    "INSERT INTO persona_choices (player_uuid, soul) VALUES (?, ?)",
                    (player_uuid, soul),
                )

    def import_persona_choices(self, choices: dict[str, str]) -> None:
        """Store choices of players who have none stored yet."""
        with self._db.transaction() as tx:
            for player_uuid, soul in sorted(choices.items()):
                tx.execute(
                    "INSERT INTO persona_choices (player_uuid, soul) VALUES (?, ?)"
                    " ON CONFLICT (player_uuid) DO NOTHING",
                    (player_uuid, soul),
                )

    def listen_optouts(self) -> frozenset[str]:
        return frozenset(
            str(row[0]) for row in self._db.query("SELECT player_uuid FROM listen_optouts")
        )

    def set_listen_optout(self, player_uuid: str, opted_out: bool) -> None:
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM listen_optouts WHERE player_uuid = ?", (player_uuid,))
            if opted_out:
                tx.execute("INSERT INTO listen_optouts (player_uuid) VALUES (?)", (player_uuid,))

    def import_listen_optouts(self, players: frozenset[str]) -> None:
        with self._db.transaction() as tx:
            for player_uuid in sorted(players):
                tx.execute(
                    "INSERT INTO listen_optouts (player_uuid) VALUES (?)"
                    " ON CONFLICT (player_uuid) DO NOTHING",
                    (player_uuid,),
                )

    # ---- retry offers

    def offer_retry(
        self, server_id: str, player_uuid: str, offer: dict[str, object], expires: datetime
    ) -> None:
        """Offer ``offer`` (the caller's JSON) to the player on ``server_id`` until ``expires``,
        replacing an older offer of theirs there."""
        with self._db.transaction() as tx:
            tx.execute(
                "DELETE FROM retry_offers WHERE server_id = ? AND player_uuid = ?",
                (server_id, player_uuid),
            )
            tx.execute(
                "INSERT INTO retry_offers (server_id, player_uuid, offer_json, expires_at)"
                " VALUES (?, ?, ?, ?)",
                (
                    server_id,
                    player_uuid,
                    json.dumps(offer, ensure_ascii=False),
                    _timestamp(expires),
                ),
            )

    def take_retry(
        self, server_id: str, player_uuid: str, now: datetime
    ) -> tuple[dict[str, object], datetime] | None:
        """The player's offer on ``server_id`` and its expiry, removed (once, whichever bridge
        asks); None when there is none or it expired."""
        with self._db.transaction() as tx:
            rows = tx.query(
                "SELECT offer_json, expires_at FROM retry_offers"
                " WHERE server_id = ? AND player_uuid = ?",
                (server_id, player_uuid),
            )
            if not rows:
                return None
            tx.execute(
                "DELETE FROM retry_offers WHERE server_id = ? AND player_uuid = ?",
                (server_id, player_uuid),
            )
        offer_json, expires_text = rows[0]
        expires = datetime.fromisoformat(str(expires_text))
        if expires <= now:
            return None
        offer = json.loads(offer_json)
        return (offer, expires) if isinstance(offer, dict) else None

    def put_back_retry(
        self, server_id: str, player_uuid: str, offer: dict[str, object], expires: datetime
    ) -> None:
        """Offer ``offer`` again until its own expiry, unless a newer one replaced it."""
        with self._db.transaction() as tx:
            tx.execute(
                "INSERT INTO retry_offers (server_id, player_uuid, offer_json, expires_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (server_id, player_uuid) DO NOTHING",
                (
                    server_id,
                    player_uuid,
                    json.dumps(offer, ensure_ascii=False),
                    _timestamp(expires),
                ),
            )

    # ---- lines owed

    def owe(self, lines: Sequence[tuple[str, str, dict[str, object]]], at: datetime) -> None:
        """Keep ``(server_id, player_uuid, line)`` rows until a bridge serving that server
        delivers them; a player's oldest go past `MAX_OWED_PER_PLAYER`."""
        if not lines:
            return
        with self._db.transaction() as tx:
            tx.executemany(
                "INSERT INTO owed_lines (server_id, player_uuid, line_json, owed_at)"
                " VALUES (?, ?, ?, ?)",
                [
                    (server_id, uuid, json.dumps(line, ensure_ascii=False), _timestamp(at))
                    for server_id, uuid, line in lines
                ],
            )
            for player_uuid in sorted({uuid for _, uuid, _ in lines}):
                tx.execute(
                    "DELETE FROM owed_lines WHERE player_uuid = ? AND seq NOT IN (SELECT seq"
                    " FROM owed_lines WHERE player_uuid = ? ORDER BY seq DESC LIMIT ?)",
                    (player_uuid, player_uuid, MAX_OWED_PER_PLAYER),
                )

    def take_owed(self, server_id: str) -> list[OwedLine]:
        """The lines owed on ``server_id``, oldest first, removed as they are read: one bridge
        takes each line once."""
        with self._db.transaction() as tx:
            rows = tx.query(
                "SELECT seq, player_uuid, line_json, owed_at FROM owed_lines"
                " WHERE server_id = ? ORDER BY seq",
                (server_id,),
            )
            if rows:
                tx.execute(
                    "DELETE FROM owed_lines WHERE server_id = ? AND seq <= ?",
                    (server_id, int(rows[-1][0])),
                )
        owed = []
        for seq, player_uuid, line_json, owed_at in rows:
            line = json.loads(line_json)
            if isinstance(line, dict):
                owed.append(
                    OwedLine(
                        int(seq),
                        server_id,
                        str(player_uuid),
                        line,
                        datetime.fromisoformat(str(owed_at)),
                    )
                )
        return owed


def _read_shelf(tx: Transaction, player_uuid: str) -> StoredShelf | None:
    rows = tx.query(
        "SELECT active, next_id, version FROM player_shelves WHERE player_uuid = ?",
        (player_uuid,),
    )
    if not rows:
        return None
    active, next_id, version = rows[0]
    conversations = tuple(
        StoredConversation(
            int(cid),
            None if title is None else str(title),
            datetime.fromisoformat(str(started)),
            None if last is None else datetime.fromisoformat(str(last)),
        )
        for cid, title, started, last in tx.query(
            "SELECT conversation_id, title, started_at, last_active FROM player_conversations"
            " WHERE player_uuid = ? AND deleted_at IS NULL ORDER BY conversation_id",
            (player_uuid,),
        )
    )
    return StoredShelf(int(active), int(next_id), conversations, int(version))


def _upsert_conversation(tx: Transaction, player_uuid: str, c: StoredConversation) -> None:
    last = None if c.last_active is None else _timestamp(c.last_active)
    params = (c.title, _timestamp(c.started), last, player_uuid, c.id)
    tx.execute(
        "UPDATE player_conversations SET title = ?, started_at = ?, last_active = ?"
        " WHERE player_uuid = ? AND conversation_id = ? AND deleted_at IS NULL",
        params,
    )
    tx.execute(
        "INSERT INTO player_conversations"
        " (title, started_at, last_active, player_uuid, conversation_id)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (player_uuid, conversation_id) DO NOTHING",
        params,
    )


def _timestamp(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise StoreError("player state timestamps must carry a timezone")
    return moment.astimezone(UTC).isoformat()
