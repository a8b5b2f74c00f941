"""What a restart needs to rebuild the sessions: which session each lane is on, the last
compaction of each session, and the approval prompts open right now.

The archive keeps every completed turn; these tables, beside the archive's in its database
(SQLite or PostgreSQL, `bridge.store.database`), keep the rest:

- ``session_starts``: a row whenever a lane starts a session (the first start, and every
  ``/mineclaw clear``), so a lane comes back on its latest session even when that one has no
  turn yet;
- ``compactions``: a compaction's summary and the last turn it summarised, written in the same
  step that swaps the summary into the live session, so a restart rebuilds exactly the
  projection the session had (the summary, then the turns archived after that turn);
- ``lane_tombstones``: the lanes of deleted conversations (`bridge.store.player_state`): a lane
  named there has no current session, so nothing restores a deleted conversation's turns;
- ``open_prompts``: a row for each approval prompt while it is open, deleted when it closes.
  A prompt never survives a restart (its token lived only in memory), so the rows found at
  start are the prompts a crash cut short, reported as expired and removed.

Calls are synchronous and short (one small row), so they run on the event loop. The records
use the archive's database and never close it: the archive does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bridge.errors import StoreError
from bridge.store.database import Database, Params, Transaction
from bridge.store.migrations import Migration, Schema, migrate

_START_COLUMNS = "lane_id TEXT NOT NULL, session_id TEXT NOT NULL, started_at TEXT NOT NULL"
_COMPACTION_COLUMNS = (
    "session_id TEXT NOT NULL, summary TEXT NOT NULL, through_turn_id TEXT NOT NULL,"
    " compacted_at TEXT NOT NULL"
)
_PROMPTS = (
    "CREATE TABLE IF NOT EXISTS open_prompts (prompt_id TEXT PRIMARY KEY,"
    " opened_at TEXT NOT NULL, fields_json TEXT NOT NULL)"
)
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS session_starts_by_lane ON session_starts (lane_id, seq)",
    "CREATE INDEX IF NOT EXISTS compactions_by_session ON compactions (session_id, seq)",
)

SCHEMA = Schema(
    "sessions",
    (
        Migration(
            1,
            "session starts per lane, compactions, open approval prompts",
            sqlite=(
                "CREATE TABLE IF NOT EXISTS session_starts"
                f" (seq INTEGER PRIMARY KEY AUTOINCREMENT, {_START_COLUMNS})",
                "CREATE TABLE IF NOT EXISTS compactions"
                f" (seq INTEGER PRIMARY KEY AUTOINCREMENT, {_COMPACTION_COLUMNS})",
                _PROMPTS,
                *_INDEXES,
            ),
            postgresql=(
                f"CREATE TABLE IF NOT EXISTS session_starts (seq BIGSERIAL PRIMARY KEY,"
                f" {_START_COLUMNS})",
                f"CREATE TABLE IF NOT EXISTS compactions (seq BIGSERIAL PRIMARY KEY,"
                f" {_COMPACTION_COLUMNS})",
                _PROMPTS,
                *_INDEXES,
            ),
        ),
        Migration.portable(
            2,
            "tombstones of deleted conversations' lanes: their sessions are never restored",
            "CREATE TABLE IF NOT EXISTS lane_tombstones (lane_id TEXT PRIMARY KEY,"
            " deleted_at TEXT NOT NULL)",
        ),
    ),
)


@dataclass(frozen=True, slots=True)
class CompactionRecord:
    """A compaction as stored: ``summary`` replaces every turn of the session up to and
    including ``through_turn_id``."""

    session_id: str
    summary: str
    through_turn_id: str


@dataclass(frozen=True, slots=True)
class OpenPrompt:
    prompt_id: str
    opened_at: datetime
    fields: dict[str, str]


class SessionRecords:
    """The session tables in ``database`` (migrated on open); usually the archive's."""

    def __init__(self, database: Database) -> None:
        self._db = database
        migrate(database, SCHEMA)

    def _write(self, sql: str, params: Params, what: str) -> None:
        try:
            with self._db.transaction() as tx:
                tx.execute(sql, params)
        except StoreError as exc:
            raise StoreError(f"cannot record {what}: {exc}") from exc

    # ---- sessions

    def session_started(self, lane_id: str, session_id: str, at: datetime) -> None:
        self._write(
            "INSERT INTO session_starts (lane_id, session_id, started_at) VALUES (?, ?, ?)",
            (lane_id, session_id, _timestamp(at)),
            f"the start of session {session_id}",
        )

    def current_session(self, lane_id: str) -> str | None:
        """The session the lane started last, or None when it never started one or its
        conversation was deleted (a tombstone: its turns are never restored into a session)."""
        rows = self._db.query(
            "SELECT session_id FROM session_starts WHERE lane_id = ? AND NOT EXISTS"
            " (SELECT 1 FROM lane_tombstones WHERE lane_tombstones.lane_id = ?)"
            " ORDER BY seq DESC LIMIT 1",
            (lane_id, lane_id),
        )
        return str(rows[0][0]) if rows else None

    def compacted(self, record: CompactionRecord, at: datetime) -> None:
        self._write(
            "INSERT INTO compactions (session_id, summary, through_turn_id, compacted_at)"
            " VALUES (?, ?, ?, ?)",
            (record.session_id, record.summary, record.through_turn_id, _timestamp(at)),
            f"the compaction of session {record.session_id}",
        )

    def last_compaction(self, session_id: str) -> CompactionRecord | None:
        rows = self._db.query(
            "SELECT summary, through_turn_id FROM compactions WHERE session_id = ?"
            " ORDER BY seq DESC LIMIT 1",
            (session_id,),
        )
        if not rows:
            return None
        summary, through = rows[0]
        return CompactionRecord(session_id, str(summary), str(through))

    # ---- approval prompts

    def prompt_opened(self, prompt_id: str, fields: dict[str, str], at: datetime) -> None:
        self._write(
            "INSERT INTO open_prompts (prompt_id, opened_at, fields_json) VALUES (?, ?, ?)",
            (prompt_id, _timestamp(at), json.dumps(fields, ensure_ascii=False)),
            f"approval prompt {prompt_id}",
        )

    def prompt_closed(self, prompt_id: str) -> None:
        self._write(
            "DELETE FROM open_prompts WHERE prompt_id = ?",
            (prompt_id,),
            f"the end of approval prompt {prompt_id}",
        )

    def take_open_prompts(self) -> list[OpenPrompt]:
        """The prompts left open by the last run, oldest first; removed as they are read."""
        with self._db.transaction() as tx:
            rows = tx.query(
                "SELECT prompt_id, opened_at, fields_json FROM open_prompts"
                " ORDER BY opened_at, prompt_id"
            )
            tx.execute("DELETE FROM open_prompts")
        prompts = []
        for prompt_id, opened, fields_json in rows:
            try:
                fields = json.loads(fields_json)
            except ValueError:
                fields = {}
            shown = {str(k): str(v) for k, v in fields.items()} if isinstance(fields, dict) else {}
            prompts.append(OpenPrompt(str(prompt_id), datetime.fromisoformat(opened), shown))
        return prompts


def tombstone_lanes(tx: Transaction, lane_ids: Sequence[str], at: str) -> None:
    """Mark ``lane_ids`` deleted inside ``tx``: `SessionRecords.current_session` finds none of
    their sessions from then on (a new session of the lane is not restored either)."""
    for lane_id in lane_ids:
        tx.execute(
            "INSERT INTO lane_tombstones (lane_id, deleted_at) VALUES (?, ?)"
            " ON CONFLICT (lane_id) DO NOTHING",
            (lane_id, at),
        )


def _timestamp(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise StoreError("session timestamps must carry a timezone")
    return moment.astimezone(UTC).isoformat()
