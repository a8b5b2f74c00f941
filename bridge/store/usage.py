"""The usage ledger: tokens used per player and for the whole server, per day and per month.

Kept in SQLite (``<config>/data/usage.sqlite3``, WAL, ``synchronous=FULL``) so a restart, even a
``kill -9``, does not give anyone their budget back. Rows are totals per holder and period
(``day`` ``2026-12-03``, ``month`` ``2026-12``): one upsert per model response, never a scan of
history. The period keys are computed by the caller (``bridge.policy.budgets``), which knows the
configured time zone; this module only adds and reads.

Usage is keyed by the player's UUID, never by a session: the public session and every private
lane of a player add to the same rows. The player's last known name is kept beside it, so
``/mineclaw usage <name>`` can find an offline player.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bridge.errors import StoreError

USAGE_FILE_NAME = "usage.sqlite3"
SCHEMA_VERSION = 1
SERVER = "*server*"
"""The holder key of the whole server's totals (never a UUID)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage_totals (
    holder           TEXT NOT NULL,
    period_kind      TEXT NOT NULL CHECK (period_kind IN ('day', 'month')),
    period           TEXT NOT NULL,
    tokens           INTEGER NOT NULL,
    estimated_tokens INTEGER NOT NULL,
    PRIMARY KEY (holder, period_kind, period)
);
CREATE TABLE IF NOT EXISTS usage_players (
    uuid      TEXT PRIMARY KEY,
    name      TEXT NOT NULL,
    seen_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS usage_players_by_name ON usage_players (name COLLATE NOCASE);
"""


@dataclass(frozen=True, slots=True)
class Periods:
    """The keys of the day and the month a moment falls in (in the configured time zone)."""

    day: str
    month: str


@dataclass(frozen=True, slots=True)
class Totals:
    """Tokens used in one period; ``estimated`` is the part the bridge estimated because the
    provider reported no usage."""

    tokens: int = 0
    estimated: int = 0


@dataclass(frozen=True, slots=True)
class HolderUsage:
    day: Totals
    month: Totals


class UsageLedger:
    """An open usage database. Calls are short and synchronous; the lock makes the shared
    connection safe from the event loop and worker threads alike."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._migrate()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open the usage ledger at {path}: {exc}") from exc

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> UsageLedger:
        return cls(data_dir / USAGE_FILE_NAME)

    @property
    def path(self) -> Path:
        return self._path

    def _migrate(self) -> None:
        (version,) = self._conn.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self._path}: usage schema {version} is newer than this bridge ({SCHEMA_VERSION})"
            )
        self._conn.executescript(f"BEGIN; {_SCHEMA} PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")

    def add(
        self,
        *,
        player_uuid: str,
        player_name: str,
        periods: Periods,
        tokens: int,
        estimated: bool,
        at: datetime | None = None,
    ) -> None:
        """Count ``tokens`` for the player and for the server, in the day and the month, in one
        transaction (all four totals move together or none does)."""
        if tokens < 0:
            raise StoreError("usage cannot be negative")
        part = tokens if estimated else 0
        moment = (at or datetime.now(UTC)).astimezone(UTC).isoformat()
        rows = [
            (holder, kind, period, tokens, part)
            for holder in (player_uuid, SERVER)
            for kind, period in (("day", periods.day), ("month", periods.month))
        ]
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    self._conn.executemany(
                        "INSERT INTO usage_totals (holder, period_kind, period, tokens,"
                        " estimated_tokens) VALUES (?, ?, ?, ?, ?)"
                        " ON CONFLICT (holder, period_kind, period) DO UPDATE SET"
                        " tokens = tokens + excluded.tokens,"
                        " estimated_tokens = estimated_tokens + excluded.estimated_tokens",
                        rows,
                    )
                    self._conn.execute(
                        "INSERT INTO usage_players (uuid, name, seen_at) VALUES (?, ?, ?)"
                        " ON CONFLICT (uuid) DO UPDATE SET name = excluded.name,"
                        " seen_at = excluded.seen_at",
                        (player_uuid, player_name, moment),
                    )
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise StoreError(f"cannot record usage: {exc}") from exc

    def usage(self, holder: str, periods: Periods) -> HolderUsage:
        """The totals of ``holder`` (a player UUID or ``SERVER``) in the given periods."""
        with self._lock:
            try:
                rows = self._conn.execute(
                    "SELECT period_kind, tokens, estimated_tokens FROM usage_totals"
                    " WHERE holder = ? AND ((period_kind = 'day' AND period = ?)"
                    " OR (period_kind = 'month' AND period = ?))",
                    (holder, periods.day, periods.month),
                ).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"cannot read usage: {exc}") from exc
        found = {kind: Totals(tokens, estimated) for kind, tokens, estimated in rows}
        return HolderUsage(day=found.get("day", Totals()), month=found.get("month", Totals()))

    def find_player(self, name: str) -> tuple[str, str] | None:
        """The UUID and name of the player last seen with ``name`` (any case), if any."""
        with self._lock:
            try:
                row = self._conn.execute(
                    "SELECT uuid, name FROM usage_players WHERE name = ? COLLATE NOCASE"
                    " ORDER BY seen_at DESC LIMIT 1",
                    (name,),
                ).fetchone()
            except sqlite3.Error as exc:
                raise StoreError(f"cannot read usage: {exc}") from exc
        return None if row is None else (row[0], row[1])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> UsageLedger:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
