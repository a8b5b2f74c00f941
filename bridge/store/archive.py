"""The lossless turn archive: every completed turn, in the bridge's database.

The database is SQLite (``<config>/data/archive.sqlite3``, WAL) by default, or PostgreSQL
(``storage`` in ``config.yml``); the statements are the same for both (`bridge.store.database`).

A turn is written in one transaction (its header row and every item row), so whatever moment the
process dies at, the archive holds each turn either whole or not at all. Compaction only changes
the live session's projection; nothing here is ever deleted by it.

On SQLite the archive uses ``synchronous=FULL``: a turn is committed at most every few seconds,
so paying one fsync per turn buys durability across power loss as well as process kills
(PostgreSQL's default ``synchronous_commit=on`` is the same promise). Calls are
synchronous; the engine runs them in a worker thread (the store's own pool,
`bridge.executors`), which is why the connection is shared under a lock rather than tied to the
thread that opened it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from bridge.errors import StoreError
from bridge.store.database import Database, DatabaseError, SqliteDatabase, Transaction
from bridge.store.migrations import Migration, Schema, open_migrated
from bridge.unicode_text import SURROGATE_ESCAPE, has_surrogate, valid_json

ARCHIVE_FILE_NAME = "archive.sqlite3"
DATA_DIR_NAME = "data"
SCHEMA_VERSION = 1

_TURN_COLUMNS = (
    "turn_id TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, player TEXT NOT NULL,"
    " started_at TEXT NOT NULL, ended_at TEXT NOT NULL, model_ref TEXT NOT NULL,"
    " control_version TEXT NOT NULL, item_count INTEGER NOT NULL"
)
_TURN_ITEMS = (
    "CREATE TABLE IF NOT EXISTS turn_items ("
    " turn_id TEXT NOT NULL REFERENCES turns (turn_id), position INTEGER NOT NULL,"
    " item_json TEXT NOT NULL, PRIMARY KEY (turn_id, position))"
)
_BY_SESSION = "CREATE INDEX IF NOT EXISTS turns_by_session ON turns (session_id, seq)"

SCHEMA = Schema(
    "archive",
    (
        # Version 1 is the schema the archive had before migrations: IF NOT EXISTS takes an
        # older file's tables over as they are.
        Migration(
            1,
            "turns and their items",
            sqlite=(
                "CREATE TABLE IF NOT EXISTS turns"
                f" (seq INTEGER PRIMARY KEY AUTOINCREMENT, {_TURN_COLUMNS})",
                _BY_SESSION,
                _TURN_ITEMS,
            ),
            postgresql=(
                f"CREATE TABLE IF NOT EXISTS turns (seq BIGSERIAL PRIMARY KEY, {_TURN_COLUMNS})",
                _BY_SESSION,
                _TURN_ITEMS,
            ),
        ),
        Migration.portable(
            2,
            "turns by player, for a player's lanes and usage across sessions",
            "CREATE INDEX IF NOT EXISTS turns_by_player ON turns (player, seq)",
        ),
        # The plugin's id of the kept question a turn answered (protocol 1.5, asks), unique:
        # a question sent again to the next bridge after its turn was committed here is found
        # answered, and no two bridges can archive it twice (NULLs never collide).
        Migration.portable(
            3,
            "the kept question each turn answered",
            "ALTER TABLE turns ADD COLUMN ask_id TEXT",
            "CREATE UNIQUE INDEX IF NOT EXISTS turns_by_ask ON turns (ask_id)",
        ),
    ),
    sqlite_user_version=True,
)
SCHEMA_VERSION = SCHEMA.latest


class ArchivedTurn(BaseModel):
    """One completed turn as the archive keeps it. Items are the provider-neutral JSON form."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    turn_id: str = Field(min_length=1, max_length=128)
    session_id: str = Field(min_length=1, max_length=128)
    player: str = Field(min_length=1, max_length=64)
    started_at: datetime
    ended_at: datetime
    model_ref: str = Field(min_length=1, max_length=256)
    control_version: str = Field(min_length=1, max_length=128)
    items: tuple[JsonValue, ...]
    ask: str | None = Field(default=None, min_length=1, max_length=128)
    """The plugin's id of the question the turn answered (protocol 1.5, ``asks``), if any."""

    def holds_personal_result(self) -> bool:
        """Whether the turn took a personal tool result (one about, or for, its asker alone).
        A public turn that did was answered to its asker alone and kept out of the shared
        session, but it is archived under that session's id (the archive is the owner's
        record): whatever rebuilds the public session from here for others (a restart or a
        takeover, ``/mineclaw history``, the public conversation index) leaves it out."""
        return any(
            isinstance(item, dict) and item.get("kind") == "tool_result" and item.get("personal")
            for item in self.items
        )


class AskArchivedError(StoreError):
    """The turn answers a question already archived with another turn (a bridge ran the
    question the plugin sent again after an earlier bridge's commit)."""


def default_archive_path(config_dir: Path) -> Path:
    """Where the archive lives unless configured otherwise: ``<config>/data/archive.sqlite3``."""
    return config_dir / DATA_DIR_NAME / ARCHIVE_FILE_NAME


def _timestamp(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise StoreError("archive timestamps must carry a timezone")
    return moment.astimezone(UTC).isoformat()


def _item_json(item: JsonValue) -> str:
    text = json.dumps(item, ensure_ascii=False, allow_nan=False)
    # The engine cleans provider text as it comes in; this keeps any other writer from
    # failing the whole turn on a surrogate SQLite cannot encode.
    return (
        json.dumps(valid_json(item), ensure_ascii=False, allow_nan=False)
        if has_surrogate(text)
        else text
    )


def _load_item(raw: str) -> JsonValue:
    # An archive written by another tool (or an older bridge) may hold an escaped lone
    # surrogate; read back as it is, it would reach a session and fail its next request.
    item: JsonValue = json.loads(raw)
    return valid_json(item) if SURROGATE_ESCAPE.search(raw) else item


Fence = Callable[[Transaction], None]
"""A check inside a turn's archive transaction (`bridge.app.network.server_leases`: the lease's
epoch)."""


class FencedArchive:
    """The ``ArchiveWriter`` of one server's turns: ``archive.append`` with the fence that
    ``fence()`` gives at the moment of the write (None: no fence, a bridge without leases)."""

    def __init__(self, archive: TurnArchive, fence: Callable[[], Fence | None]) -> None:
        self._archive = archive
        self._fence = fence

    def append(self, turn: ArchivedTurn) -> None:
        fence = self._fence()
        if fence is None:
            self._archive.append(turn)  # as it was: a stand-in archive may take no fence
        else:
            self._archive.append(turn, fence=fence)


class TurnArchive:
    """An open archive. Use as a context manager or call `close`.

    ``database``: a SQLite file path (opened with ``synchronous=FULL``) or an open `Database`
    of either backend, which the archive then owns and closes.
    """

    def __init__(
        self, database: Path | Database, *, commit_deadline_s: float | None = None
    ) -> None:
        self._db = open_migrated(database, SCHEMA, label="turn archive", synchronous="FULL")
        self.commit_deadline_s = commit_deadline_s
        """A turn's commit's own deadline (None: the database's): the turn's lane, and the
        next question asked in it, wait for that commit."""

    @classmethod
    def in_config_dir(cls, config_dir: Path) -> TurnArchive:
        return cls(default_archive_path(config_dir))

    @property
    def database(self) -> Database:
        """The archive's database; other repositories may keep their tables beside it."""
        return self._db

    @property
    def path(self) -> Path | None:
        """The SQLite file, or None on PostgreSQL."""
        return self._db.path if isinstance(self._db, SqliteDatabase) else None

    def append(self, turn: ArchivedTurn, *, fence: Fence | None = None) -> None:
        """Store one completed turn, whole, in one transaction. ``fence`` runs first in that
        transaction and raises `StoreError` when the turn may no longer be stored (the bridge
        lost the lease of its server): then nothing of it is."""
        try:
            item_rows = [
                (turn.turn_id, position, _item_json(item))
                for position, item in enumerate(turn.items)
            ]
        except (TypeError, ValueError) as exc:
            raise StoreError(f"turn {turn.turn_id}: an item is not plain JSON: {exc}") from exc
        header = (
            turn.turn_id,
            turn.session_id,
            turn.player,
            _timestamp(turn.started_at),
            _timestamp(turn.ended_at),
            turn.model_ref,
            turn.control_version,
            len(item_rows),
            turn.ask,
        )
        try:
            with self._db.transaction(deadline_s=self.commit_deadline_s) as tx:
                if fence is not None:
                    fence(tx)
                if turn.ask is not None and tx.query(
                    "SELECT 1 FROM turns WHERE ask_id = ?", (turn.ask,)
                ):
                    raise AskArchivedError(f"question {turn.ask} is already archived")
                tx.execute(
                    "INSERT INTO turns (turn_id, session_id, player, started_at, ended_at,"
                    " model_ref, control_version, item_count, ask_id)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    header,
                )
                tx.executemany(
                    "INSERT INTO turn_items (turn_id, position, item_json) VALUES (?, ?, ?)",
                    item_rows,
                )
        except DatabaseError as exc:
            if exc.duplicate and turn.ask is not None and self.turn_of_ask(turn.ask) is not None:
                # Two bridges committing the same question at once: the index decided.
                raise AskArchivedError(f"question {turn.ask} is already archived") from exc
            if exc.duplicate:
                raise StoreError(f"turn {turn.turn_id} is already archived") from exc
            raise StoreError(f"cannot archive turn {turn.turn_id}: {exc}") from exc

    def turn_of_ask(self, ask_id: str) -> ArchivedTurn | None:
        """The archived turn that answered the plugin's question ``ask_id``, if one did."""
        found = self._read("WHERE ask_id = ?", (ask_id,))
        return found[0] if found else None

    def turns_of(self, session_id: str) -> list[ArchivedTurn]:
        """Every archived turn of a session, oldest first."""
        return self._read("WHERE session_id = ?", (session_id,))

    def turns_of_player(self, player: str) -> list[ArchivedTurn]:
        """Every archived turn a player asked, in any session, oldest first."""
        return self._read("WHERE player = ?", (player,))

    def all_turns(self) -> list[ArchivedTurn]:
        """Every archived turn, oldest first."""
        return self._read("", ())

    def page(
        self, *, player: str | None, before: int | None, limit: int
    ) -> tuple[list[ArchivedTurn], int | None]:
        """Up to ``limit`` turns (of ``player``, or anyone's) newest first, older than the
        cursor ``before``; and the cursor of the next page (None on the last). Walks the
        primary key or ``turns_by_player``, never the table (the console)."""
        where: list[str] = []
        params: list[object] = []
        if player is not None:
            where.append("player = ?")
            params.append(player)
        if before is not None:
            where.append("seq < ?")
            params.append(before)
        sql = "SELECT seq FROM turns" + (" WHERE " + " AND ".join(where) if where else "")
        try:
            seqs = [
                int(row[0])
                for row in self._db.query(f"{sql} ORDER BY seq DESC LIMIT ?", (*params, limit + 1))
            ]
        except DatabaseError as exc:
            raise StoreError(f"cannot read the turn archive: {exc}") from exc
        shown = seqs[:limit]
        if not shown:
            return [], None
        marks = ", ".join("?" for _ in shown)
        turns = self._read(f"WHERE seq IN ({marks})", shown)
        return turns[::-1], shown[-1] if len(seqs) > limit else None

    def session_ids(self) -> list[str]:
        """Sessions in the order their first turn was archived."""
        try:
            rows = self._db.query(
                "SELECT session_id FROM turns GROUP BY session_id ORDER BY MIN(seq)"
            )
        except DatabaseError as exc:
            raise StoreError(f"cannot read the turn archive: {exc}") from exc
        return [row[0] for row in rows]

    def _read(self, where: str, params: Sequence[Any]) -> list[ArchivedTurn]:
        try:
            # One transaction: on PostgreSQL a turn committed between the two reads would
            # otherwise show up with items but no header, or the other way round.
            with self._db.transaction() as tx:
                headers = tx.query(
                    "SELECT turn_id, session_id, player, started_at, ended_at, model_ref,"
                    f" control_version, item_count, ask_id FROM turns {where} ORDER BY seq",
                    params,
                )
                items: dict[str, list[str]] = {}
                for turn_id, item_json in tx.query(
                    "SELECT turn_items.turn_id, item_json FROM turn_items"
                    f" JOIN turns USING (turn_id) {where} ORDER BY seq, position",
                    params,
                ):
                    items.setdefault(turn_id, []).append(item_json)
        except DatabaseError as exc:
            raise StoreError(f"cannot read the turn archive: {exc}") from exc
        turns = []
        for header in headers:
            turn_id, session_id, player, started, ended, model_ref, version, count, ask = header
            raw_items = items.get(turn_id, [])
            if len(raw_items) != count:
                raise StoreError(
                    f"{self._db.description}: turn {turn_id} has {len(raw_items)} items,"
                    f" expected {count}"
                )
            try:
                turns.append(
                    ArchivedTurn(
                        turn_id=turn_id,
                        session_id=session_id,
                        player=player,
                        started_at=datetime.fromisoformat(started),
                        ended_at=datetime.fromisoformat(ended),
                        model_ref=model_ref,
                        control_version=version,
                        items=tuple(_load_item(raw) for raw in raw_items),
                        ask=ask,
                    )
                )
            except (ValueError, ValidationError) as exc:
                raise StoreError(
                    f"{self._db.description}: turn {turn_id} is unreadable: {exc}"
                ) from exc
        return turns

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> TurnArchive:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
