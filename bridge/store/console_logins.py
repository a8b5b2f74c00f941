"""One-time login links of the owner's console.

``mineclaw-bridge console`` (a process of its own) issues a link; the serving bridge redeems
it. The table is how the two meet: it keeps the SHA-256 of each token (never the token), the
role it grants, when it expires and when it was used. Redeeming is one conditional UPDATE, so
a link works once even when two requests race for it, on either backend.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from bridge.errors import StoreError
from bridge.store.database import Database, DatabaseError
from bridge.store.migrations import Migration, Schema, open_migrated

Role = Literal["owner", "viewer"]
ROLES: tuple[Role, ...] = ("owner", "viewer")
TOKEN_BYTES = 32

SCHEMA = Schema(
    "console_logins",
    (
        Migration.portable(
            1,
            "console login links",
            "CREATE TABLE IF NOT EXISTS console_logins (token_sha256 TEXT PRIMARY KEY,"
            " role TEXT NOT NULL, issued_by TEXT NOT NULL, issued_at TEXT NOT NULL,"
            " expires_at TEXT NOT NULL, used_at TEXT)",
        ),
    ),
)


class LoginError(StoreError):
    """A login link could not be issued or checked."""


@dataclass(frozen=True, slots=True)
class Redeemed:
    role: Role
    issued_by: str


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


class ConsoleLogins:
    """``database``: a SQLite path or an open `Database` (then owned)."""

    def __init__(self, database: Path | Database) -> None:
        self._db = open_migrated(database, SCHEMA, label="console logins", error=LoginError)

    def issue(
        self, role: Role, issued_by: str, *, valid_for: timedelta, now: datetime | None = None
    ) -> str:
        """A new single-use token granting ``role`` for ``valid_for``."""
        if role not in ROLES:
            raise LoginError(f"unknown console role {role!r}")
        token = secrets.token_urlsafe(TOKEN_BYTES)
        moment = (now or datetime.now(UTC)).astimezone(UTC)
        try:
            with self._db.transaction() as tx:
                tx.execute(
                    "INSERT INTO console_logins"
                    " (token_sha256, role, issued_by, issued_at, expires_at, used_at)"
                    " VALUES (?, ?, ?, ?, ?, NULL)",
                    (
                        _digest(token),
                        role,
                        issued_by[:64],
                        moment.isoformat(),
                        (moment + valid_for).isoformat(),
                    ),
                )
        except DatabaseError as exc:
            raise LoginError(f"cannot issue a console login link: {exc}") from exc
        return token

    def redeem(self, token: str, *, now: datetime | None = None) -> Redeemed | None:
        """The role ``token`` grants, marking it used; None when it is unknown, expired or
        used already (the three are not told apart: a guesser learns nothing)."""
        if not token or len(token) > 256:
            return None
        moment = (now or datetime.now(UTC)).astimezone(UTC).isoformat()
        try:
            with self._db.transaction() as tx:
                rows = tx.query(
                    "UPDATE console_logins SET used_at = ?"
                    " WHERE token_sha256 = ? AND used_at IS NULL AND expires_at > ?"
                    " RETURNING role, issued_by",
                    (moment, _digest(token), moment),
                )
        except DatabaseError as exc:
            raise LoginError(f"cannot check a console login link: {exc}") from exc
        if not rows:
            return None
        role, issued_by = rows[0]
        if role not in ROLES:
            return None
        return Redeemed(role, str(issued_by))

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ConsoleLogins:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
