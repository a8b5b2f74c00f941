"""Function reviews: which source of a Function the owner has read and accepted.

A review is keyed by the Function's name and the SHA-256 of its ``on_call`` source, and keeps
the source itself, so the next review can show the diff against the last reviewed version.
With ``functions.require_review: true`` a Function whose current hash has no review here is
not offered to the model (`bridge.functions.review_state`). Rows are only ever added: the
table is the history of who accepted which source, and when.

The table lives in the state database (``archive.sqlite3``, or the PostgreSQL database), where
``mineclaw-bridge functions review`` and the console both write it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bridge.errors import StoreError
from bridge.store.database import Database, DatabaseError
from bridge.store.migrations import Migration, Schema, open_migrated

_COLUMNS = (
    "name TEXT NOT NULL, source_sha256 TEXT NOT NULL, source TEXT NOT NULL,"
    " reviewer TEXT NOT NULL, reviewed_at TEXT NOT NULL"
)
_BY_NAME = "CREATE INDEX IF NOT EXISTS function_reviews_by_name ON function_reviews (name, seq)"

SCHEMA = Schema(
    "function_reviews",
    (
        Migration(
            1,
            "function reviews",
            sqlite=(
                "CREATE TABLE IF NOT EXISTS function_reviews"
                f" (seq INTEGER PRIMARY KEY AUTOINCREMENT, {_COLUMNS})",
                _BY_NAME,
            ),
            postgresql=(
                "CREATE TABLE IF NOT EXISTS function_reviews"
                f" (seq BIGSERIAL PRIMARY KEY, {_COLUMNS})",
                _BY_NAME,
            ),
        ),
    ),
)

MAX_REVIEWER_CHARS = 64


class ReviewError(StoreError):
    """A review could not be read or written."""


@dataclass(frozen=True, slots=True)
class Review:
    """One accepted source of a Function."""

    name: str
    source_sha256: str
    source: str
    reviewer: str
    reviewed_at: datetime


class FunctionReviews:
    """The reviews table. ``database``: a SQLite path or an open `Database` (then owned)."""

    def __init__(self, database: Path | Database) -> None:
        self._db = open_migrated(database, SCHEMA, label="function reviews", error=ReviewError)

    def record(
        self, name: str, source: str, source_sha256: str, reviewer: str, at: datetime | None = None
    ) -> Review:
        """Store that ``reviewer`` accepted ``source`` (whose hash the caller computed)."""
        reviewer = reviewer.strip()[:MAX_REVIEWER_CHARS] or "unknown"
        moment = (at or datetime.now(UTC)).astimezone(UTC)
        try:
            with self._db.transaction() as tx:
                tx.execute(
                    "INSERT INTO function_reviews"
                    " (name, source_sha256, source, reviewer, reviewed_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (name, source_sha256, source, reviewer, moment.isoformat()),
                )
        except DatabaseError as exc:
            raise ReviewError(f"cannot record the review of {name!r}: {exc}") from exc
        return Review(name, source_sha256, source, reviewer, moment)

    def latest(self, name: str) -> Review | None:
        """The last review of ``name``, whatever its hash."""
        rows = self._read(
            "SELECT name, source_sha256, source, reviewer, reviewed_at FROM function_reviews"
            " WHERE name = ? ORDER BY seq DESC LIMIT 1",
            (name,),
        )
        if not rows:
            return None
        name_, sha, source, reviewer, at = rows[0]
        return Review(
            str(name_), str(sha), str(source), str(reviewer), datetime.fromisoformat(str(at))
        )

    def reviewed(self) -> frozenset[tuple[str, str]]:
        """Every (name, source hash) pair that has a review."""
        rows = self._read("SELECT DISTINCT name, source_sha256 FROM function_reviews", ())
        return frozenset((str(name), str(sha)) for name, sha in rows)

    def _read(self, sql: str, params: tuple[str, ...]) -> list[tuple[object, ...]]:
        try:
            return [tuple(row) for row in self._db.query(sql, params)]
        except DatabaseError as exc:
            raise ReviewError(f"cannot read the function reviews: {exc}") from exc

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> FunctionReviews:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
