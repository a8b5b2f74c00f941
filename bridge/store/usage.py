"""The usage ledger: tokens used per player and for the whole server, per day and per month.

Kept in SQLite (``<config>/data/usage.sqlite3``, WAL, ``synchronous=FULL``) or in the PostgreSQL
database ``storage`` names (`bridge.store.database`), so a restart, even a ``kill -9``, does not
give anyone their budget back. Rows are totals per holder and period
(``day`` ``2026-12-03``, ``month`` ``2026-12``): one upsert per model response, never a scan of
history. The period keys are computed by the caller (``bridge.policy.budgets``), which knows the
configured time zone; this module only adds and reads.

Usage is keyed by the player's UUID, never by a session: the public session and every private
lane of a player add to the same rows. The player's last known name is kept beside it, and
every name they were seen with, so ``/mineclaw usage <name>`` finds an offline player by their
current or a former name (the UUID underneath).

Every row is also counted by its ``purpose`` (``turn``, ``compaction``, ``listen.decision``,
...): what the tokens were spent on. A request that no player asked for (a compaction, a
decision) has no player: it is counted for the server alone (``player_uuid=None``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bridge.errors import StoreError
from bridge.store.database import Database, DatabaseError, SqliteDatabase, Transaction
from bridge.store.migrations import Migration, Schema, open_migrated

USAGE_FILE_NAME = "usage.sqlite3"
SERVER = "*server*"
"""The holder key of the whole server's totals (never a UUID)."""

_TOTALS = (
    "CREATE TABLE IF NOT EXISTS usage_totals ("
    " holder TEXT NOT NULL,"
    " period_kind TEXT NOT NULL CHECK (period_kind IN ('day', 'month')),"
    " period TEXT NOT NULL, tokens BIGINT NOT NULL, estimated_tokens BIGINT NOT NULL,"
    " PRIMARY KEY (holder, period_kind, period))"
)
_PLAYERS = (
    "CREATE TABLE IF NOT EXISTS usage_players"
    " (uuid TEXT PRIMARY KEY, name TEXT NOT NULL, seen_at TEXT NOT NULL)"
)
_PURPOSES = (
    "CREATE TABLE IF NOT EXISTS usage_purposes ("
    " holder TEXT NOT NULL,"
    " period_kind TEXT NOT NULL CHECK (period_kind IN ('day', 'month')),"
    " period TEXT NOT NULL, purpose TEXT NOT NULL,"
    " tokens BIGINT NOT NULL, estimated_tokens BIGINT NOT NULL,"
    " PRIMARY KEY (holder, period_kind, period, purpose))"
)
_MODELS = (
    "CREATE TABLE IF NOT EXISTS usage_models ("
    " period TEXT NOT NULL, model TEXT NOT NULL, tier TEXT NOT NULL,"
    " input_tokens BIGINT NOT NULL, cached_input_tokens BIGINT NOT NULL,"
    " output_tokens BIGINT NOT NULL, estimated_tokens BIGINT NOT NULL,"
    " PRIMARY KEY (period, model, tier))"
)
_NAMES = (
    "CREATE TABLE IF NOT EXISTS usage_names"
    " (uuid TEXT NOT NULL, name TEXT NOT NULL, seen_at TEXT NOT NULL, PRIMARY KEY (uuid, name))"
)

SCHEMA = Schema(
    "usage",
    (
        # A usage.sqlite3 file made before migrations existed is taken over as it is, with its
        # NOCASE index; lookups compare lower() on both backends, indexed by version 2.
        Migration(
            1,
            "usage totals and players",
            sqlite=(
                _TOTALS,
                _PLAYERS,
                "CREATE INDEX IF NOT EXISTS usage_players_by_name"
                " ON usage_players (name COLLATE NOCASE)",
            ),
            postgresql=(_TOTALS, _PLAYERS),
        ),
        Migration.portable(
            2,
            "players by lower-cased name",
            "CREATE INDEX IF NOT EXISTS usage_players_by_lower_name ON usage_players (lower(name))",
        ),
        Migration.portable(
            3,
            "usage by purpose; every name a player was seen with",
            _PURPOSES,
            _NAMES,
            "CREATE INDEX IF NOT EXISTS usage_names_by_lower_name ON usage_names (lower(name))",
            # The names known so far are each player's first entry in the history.
            "INSERT INTO usage_names (uuid, name, seen_at)"
            " SELECT uuid, name, seen_at FROM usage_players",
        ),
        Migration.portable(
            4,
            "the server's daily usage per model and tier, by kind of token",
            _MODELS,
        ),
    ),
    sqlite_user_version=True,
)
SCHEMA_VERSION = SCHEMA.latest


@dataclass(frozen=True, slots=True)
class Periods:
    """The keys of the day and the month a moment falls in (in the configured time zone)."""

    day: str
    month: str


@dataclass(frozen=True, slots=True)
class UsageDetail:
    """Which model served a request, for whose tier, and its tokens by kind (``input_tokens``
    includes the cached ones, as providers report it): the console's plots per model and tier
    and its cost estimate. Counted for the server's day only."""

    model: str
    tier: str
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class ModelDay:
    """The server's tokens of one model and tier on one day."""

    day: str
    model: str
    tier: str
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    estimated: int


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


@dataclass(frozen=True, slots=True)
class DayUsage:
    """One holder's tokens on one day (``name``: a player's last known name; None for the
    server's totals)."""

    holder: str
    name: str | None
    day: str
    tokens: int
    estimated: int


def _seen(tx: Transaction, player_uuid: str, player_name: str, moment: str) -> None:
    tx.execute(
        "INSERT INTO usage_players (uuid, name, seen_at) VALUES (?, ?, ?)"
        " ON CONFLICT (uuid) DO UPDATE SET name = excluded.name, seen_at = excluded.seen_at",
        (player_uuid, player_name, moment),
    )
    tx.execute(
        "INSERT INTO usage_names (uuid, name, seen_at) VALUES (?, ?, ?)"
        " ON CONFLICT (uuid, name) DO UPDATE SET seen_at = excluded.seen_at",
        (player_uuid, player_name, moment),
    )


class UsageLedger:
    """An open usage database. Calls are short and synchronous; the database's lock makes the
    shared connection safe from the event loop and worker threads alike.

    ``database``: a SQLite file path (``synchronous=FULL``) or an open `Database` of either
    backend, which the ledger then owns and closes."""

    def __init__(
        self, database: Path | Database, *, record_deadline_s: float | None = None
    ) -> None:
        self._db = open_migrated(database, SCHEMA, label="usage ledger", synchronous="FULL")
        self.record_deadline_s = record_deadline_s
        """The deadline of one ``record`` (None: the database's): a turn's end waits for it, so
        a hung backend must not hold the turn (and the question after it) for the whole
        transaction deadline; usage it could not write is kept and counted later."""

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> UsageLedger:
        return cls(data_dir / USAGE_FILE_NAME)

    @property
    def path(self) -> Path | None:
        """The SQLite file, or None on PostgreSQL."""
        return self._db.path if isinstance(self._db, SqliteDatabase) else None

    def add(
        self,
        *,
        player_uuid: str | None,
        player_name: str | None,
        periods: Periods,
        tokens: int,
        estimated: bool,
        purpose: str = "turn",
        at: datetime | None = None,
        detail: UsageDetail | None = None,
    ) -> None:
        """Count ``tokens`` for the player (if any) and for the server, in the day and the
        month, in total and under ``purpose``, and by model and tier when ``detail`` says
        them, in one transaction (every total moves together or none does)."""
        if tokens < 0:
            raise StoreError("usage cannot be negative")
        if not purpose:
            raise StoreError("usage needs a purpose")
        part = tokens if estimated else 0
        moment = (at or datetime.now(UTC)).astimezone(UTC).isoformat()
        holders = (SERVER,) if player_uuid is None else (player_uuid, SERVER)
        keys = [
            (holder, kind, period)
            for holder in holders
            for kind, period in (("day", periods.day), ("month", periods.month))
        ]
        try:
            with self._db.transaction(deadline_s=self.record_deadline_s) as tx:
                # The existing row is named by its table: PostgreSQL finds a bare column
                # ambiguous beside ``excluded``.
                tx.executemany(
                    "INSERT INTO usage_totals (holder, period_kind, period, tokens,"
                    " estimated_tokens) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT (holder, period_kind, period) DO UPDATE SET"
                    " tokens = usage_totals.tokens + excluded.tokens,"
                    " estimated_tokens = usage_totals.estimated_tokens"
                    " + excluded.estimated_tokens",
                    [(*key, tokens, part) for key in keys],
                )
                tx.executemany(
                    "INSERT INTO usage_purposes (holder, period_kind, period, purpose, tokens,"
                    " estimated_tokens) VALUES (?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (holder, period_kind, period, purpose) DO UPDATE SET"
                    " tokens = usage_purposes.tokens + excluded.tokens,"
                    " estimated_tokens = usage_purposes.estimated_tokens"
                    " + excluded.estimated_tokens",
                    [(*key, purpose, tokens, part) for key in keys],
                )
                if detail is not None:
                    cached = min(max(0, detail.cached_input_tokens), max(0, detail.input_tokens))
                    tx.execute(
                        "INSERT INTO usage_models (period, model, tier, input_tokens,"
                        " cached_input_tokens, output_tokens, estimated_tokens)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?)"
                        " ON CONFLICT (period, model, tier) DO UPDATE SET"
                        " input_tokens = usage_models.input_tokens + excluded.input_tokens,"
                        " cached_input_tokens = usage_models.cached_input_tokens"
                        " + excluded.cached_input_tokens,"
                        " output_tokens = usage_models.output_tokens + excluded.output_tokens,"
                        " estimated_tokens = usage_models.estimated_tokens"
                        " + excluded.estimated_tokens",
                        (
                            periods.day,
                            detail.model[:200],
                            detail.tier[:64],
                            max(0, detail.input_tokens),
                            cached,
                            max(0, detail.output_tokens),
                            part,
                        ),
                    )
                if player_uuid is not None and player_name:
                    _seen(tx, player_uuid, player_name, moment)
        except DatabaseError as exc:
            raise StoreError(f"cannot record usage: {exc}") from exc

    def saw(self, player_uuid: str, player_name: str, at: datetime | None = None) -> None:
        """Remember that ``player_uuid`` goes by ``player_name`` now (without any usage)."""
        moment = (at or datetime.now(UTC)).astimezone(UTC).isoformat()
        try:
            with self._db.transaction() as tx:
                _seen(tx, player_uuid, player_name, moment)
        except DatabaseError as exc:
            raise StoreError(f"cannot record a player's name: {exc}") from exc

    def by_purpose(self, holder: str, periods: Periods) -> dict[str, HolderUsage]:
        """The totals of ``holder`` in the given periods, per purpose."""
        rows = self._read(
            "SELECT purpose, period_kind, tokens, estimated_tokens FROM usage_purposes"
            " WHERE holder = ? AND ((period_kind = 'day' AND period = ?)"
            " OR (period_kind = 'month' AND period = ?))",
            (holder, periods.day, periods.month),
        )
        found: dict[str, dict[str, Totals]] = {}
        for purpose, kind, tokens, estimated in rows:
            found.setdefault(purpose, {})[kind] = Totals(int(tokens), int(estimated))
        return {
            purpose: HolderUsage(day=kinds.get("day", Totals()), month=kinds.get("month", Totals()))
            for purpose, kinds in sorted(found.items())
        }

    def usage(self, holder: str, periods: Periods) -> HolderUsage:
        """The totals of ``holder`` (a player UUID or ``SERVER``) in the given periods."""
        rows = self._read(
            "SELECT period_kind, tokens, estimated_tokens FROM usage_totals"
            " WHERE holder = ? AND ((period_kind = 'day' AND period = ?)"
            " OR (period_kind = 'month' AND period = ?))",
            (holder, periods.day, periods.month),
        )
        found = {kind: Totals(int(tokens), int(estimated)) for kind, tokens, estimated in rows}
        return HolderUsage(day=found.get("day", Totals()), month=found.get("month", Totals()))

    def days_since(self, first_day: str) -> list[DayUsage]:
        """Every holder's daily totals from ``first_day`` (a day key) on, oldest first: the
        console's plots. The rows are players times days, never the history of requests."""
        rows = self._read(
            "SELECT t.holder, p.name, t.period, t.tokens, t.estimated_tokens FROM usage_totals t"
            " LEFT JOIN usage_players p ON p.uuid = t.holder"
            " WHERE t.period_kind = 'day' AND t.period >= ? ORDER BY t.period, t.holder",
            (first_day,),
        )
        return [
            DayUsage(holder, None if holder == SERVER else name, day, int(tokens), int(estimated))
            for holder, name, day, tokens, estimated in rows
        ]

    def server_purposes_since(self, first_day: str) -> list[tuple[str, str, int]]:
        """(day, purpose, tokens) of the server's totals from ``first_day`` on."""
        rows = self._read(
            "SELECT period, purpose, tokens FROM usage_purposes"
            " WHERE holder = ? AND period_kind = 'day' AND period >= ? ORDER BY period, purpose",
            (SERVER, first_day),
        )
        return [(str(day), str(purpose), int(tokens)) for day, purpose, tokens in rows]

    def models_since(self, first_day: str) -> list[ModelDay]:
        """The server's tokens per model and tier per day from ``first_day`` on, oldest first
        (requests counted before this was kept have no model: they are in the totals only)."""
        rows = self._read(
            "SELECT period, model, tier, input_tokens, cached_input_tokens, output_tokens,"
            " estimated_tokens FROM usage_models WHERE period >= ? ORDER BY period, model, tier",
            (first_day,),
        )
        return [
            ModelDay(str(day), str(model), str(tier), *(int(n) for n in numbers))
            for day, model, tier, *numbers in rows
        ]

    def find_player(self, name: str) -> tuple[str, str] | None:
        """The UUID and current name of the player last seen with ``name`` (any case), now or
        before a rename."""
        rows = self._read(
            "SELECT n.uuid, p.name FROM usage_names n JOIN usage_players p ON p.uuid = n.uuid"
            " WHERE lower(n.name) = lower(?) ORDER BY n.seen_at DESC LIMIT 1",
            (name,),
        )
        return None if not rows else (rows[0][0], rows[0][1])

    def _read(self, sql: str, params: tuple[str, ...]) -> list[tuple[Any, ...]]:
        try:
            return [tuple(row) for row in self._db.query(sql, params)]
        except DatabaseError as exc:
            raise StoreError(f"cannot read usage: {exc}") from exc

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> UsageLedger:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
