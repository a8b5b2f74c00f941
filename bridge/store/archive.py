"""The lossless turn archive: every completed turn, in an embedded SQLite database (WAL).

A turn is written in one transaction (its header row and every item row), so whatever moment the
process dies at, the archive holds each turn either whole or not at all. Compaction only changes
the live session's projection; nothing here is ever deleted by it.

The archive uses ``synchronous=FULL``: a turn is committed at most every few seconds, so paying
one fsync per turn buys durability across power loss as well as process kills. Calls are
synchronous; the engine runs them in a worker thread (`asyncio.to_thread`), which is why the
connection is shared under a lock rather than tied to the thread that opened it.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from bridge.errors import StoreError
from bridge.unicode_text import SURROGATE_ESCAPE, has_surrogate, valid_json

ARCHIVE_FILE_NAME = "archive.sqlite3"
DATA_DIR_NAME = "data"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    turn_id         TEXT NOT NULL UNIQUE,
    session_id      TEXT NOT NULL,
    player          TEXT NOT NULL,
    started_at      TEXT NOT NULL,
    ended_at        TEXT NOT NULL,
    model_ref       TEXT NOT NULL,
    control_version TEXT NOT NULL,
    item_count      INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS turns_by_session ON turns (session_id, seq);
CREATE TABLE IF NOT EXISTS turn_items (
    turn_id   TEXT NOT NULL REFERENCES turns (turn_id),
    position  INTEGER NOT NULL,
    item_json TEXT NOT NULL,
    PRIMARY KEY (turn_id, position)
);
"""


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


class TurnArchive:
    """An open archive database. Use as a context manager or call `close`."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open the turn archive at {path}: {exc}") from exc

    @classmethod
    def in_config_dir(cls, config_dir: Path) -> TurnArchive:
        return cls(default_archive_path(config_dir))

    @property
    def path(self) -> Path:
        return self._path

    def _migrate(self) -> None:
        (version,) = self._conn.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self._path}: archive schema {version} is newer than this bridge"
                f" ({SCHEMA_VERSION})"
            )
        self._conn.executescript(f"BEGIN; {_SCHEMA} PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")

    def append(self, turn: ArchivedTurn) -> None:
        """Store one completed turn, whole, in one transaction."""
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
        )
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    self._conn.execute(
                        "INSERT INTO turns (turn_id, session_id, player, started_at, ended_at,"
                        " model_ref, control_version, item_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        header,
                    )
                    self._conn.executemany(
                        "INSERT INTO turn_items (turn_id, position, item_json) VALUES (?, ?, ?)",
                        item_rows,
                    )
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                if "UNIQUE constraint failed: turns.turn_id" in str(exc):
                    raise StoreError(f"turn {turn.turn_id} is already archived") from exc
                raise StoreError(f"cannot archive turn {turn.turn_id}: {exc}") from exc

    def turns_of(self, session_id: str) -> list[ArchivedTurn]:
        """Every archived turn of a session, oldest first."""
        return self._read("WHERE session_id = ?", (session_id,))

    def all_turns(self) -> list[ArchivedTurn]:
        """Every archived turn, oldest first."""
        return self._read("", ())

    def session_ids(self) -> list[str]:
        """Sessions in the order their first turn was archived."""
        with self._lock:
            try:
                rows = self._conn.execute(
                    "SELECT session_id FROM turns GROUP BY session_id ORDER BY MIN(seq)"
                ).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"cannot read the turn archive: {exc}") from exc
        return [row[0] for row in rows]

    def _read(self, where: str, params: Sequence[Any]) -> list[ArchivedTurn]:
        with self._lock:
            try:
                headers = self._conn.execute(
                    "SELECT turn_id, session_id, player, started_at, ended_at, model_ref,"
                    f" control_version, item_count FROM turns {where} ORDER BY seq",
                    params,
                ).fetchall()
                items: dict[str, list[str]] = {}
                for turn_id, item_json in self._conn.execute(
                    "SELECT turn_items.turn_id, item_json FROM turn_items"
                    f" JOIN turns USING (turn_id) {where} ORDER BY seq, position",
                    params,
                ):
                    items.setdefault(turn_id, []).append(item_json)
            except sqlite3.Error as exc:
                raise StoreError(f"cannot read the turn archive: {exc}") from exc
        turns = []
        for header in headers:
            turn_id, session_id, player, started, ended, model_ref, version, count = header
            raw_items = items.get(turn_id, [])
            if len(raw_items) != count:
                raise StoreError(
                    f"{self._path}: turn {turn_id} has {len(raw_items)} items, expected {count}"
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
                    )
                )
            except (ValueError, ValidationError) as exc:
                raise StoreError(f"{self._path}: turn {turn_id} is unreadable: {exc}") from exc
        return turns

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> TurnArchive:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
