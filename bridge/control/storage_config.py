"""``config.yml``'s ``storage`` section: which database holds the bridge's state.

``backend: sqlite`` (the default) keeps everything in files under ``<config>/data``.
``backend: postgresql`` needs ``dsn`` (a ``postgresql://user@host:port/dbname`` URL or a
``key=value`` connection string) and, unless the server trusts the bridge's host, ``password``
as an environment reference (``${MINECLAW_DB_PASSWORD}``, set in ``.env``). A password written
into the DSN or into ``password`` itself is refused: ``config.yml`` is often shared, ``.env``
is not. Read at start only; a change needs a restart.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from bridge.control.base import StrictModel
from bridge.control.secrets import Secret, referenced_secret

_DSN_SCHEMES = ("postgresql://", "postgres://")


class StorageConfig(StrictModel):
    """Where the archive, the audit log and the other tables live."""

    backend: Literal["sqlite", "postgresql"] = "sqlite"
    dsn: str | None = Field(default=None, max_length=2048, validate_default=True)
    password: Secret = Field(default=Secret(""), validate_default=True)
    # serve's patience with a database that does not answer yet (booted before it): retried
    # with a growing pause and a line per attempt; 0 tries once.
    start_wait_s: int = Field(default=300, ge=0, le=86_400)
    # serve's bound on its whole shutdown after SIGTERM or Ctrl-C, whatever the database does:
    # past it the process exits, so its sessions and leases end (bridge.cli.shutdown_bound).
    stop_wait_s: int = Field(default=30, ge=1, le=3600)
    # A network's leases (backend postgresql; docs/operations.md gives the failover times as
    # functions of these): renewed every lease_renew_s, lost lease_ttl_s after the last
    # renewal, each poll of the lease connection cut at lease_deadline_s.
    lease_ttl_s: float = Field(default=3.0, ge=0.5, le=600)
    lease_renew_s: float = Field(default=0.5, ge=0.1, le=60)
    lease_deadline_s: float = Field(default=2.0, ge=0.2, le=60)
    # Every transaction or read of PostgreSQL is cut by the bridge at deadline_s (a hung
    # backend never fires its own statement_timeout); statement_timeout_s lets the server stop
    # a slow statement first, with its clean error.
    deadline_s: float = Field(default=10.0, ge=0.5, le=600)
    statement_timeout_s: float = Field(default=8.0, ge=0.1, le=600)
    # A turn's archive commit has a deadline of its own: the next question of its lane waits
    # for it, so a hung backend must not hold that question for the whole deadline_s.
    commit_deadline_s: float = Field(default=3.0, ge=0.2, le=600)

    @field_validator("dsn")
    @classmethod
    def _dsn(cls, value: str | None, info: ValidationInfo) -> str | None:
        backend = info.data.get("backend")
        if value is None:
            if backend == "postgresql":
                raise ValueError(
                    "backend postgresql needs a dsn, such as "
                    "postgresql://mineclaw@db.example:5432/mineclaw"
                )
            return None
        if backend != "postgresql":
            raise ValueError("dsn is only read with backend: postgresql")
        if not value.isprintable():
            raise ValueError("must not contain control characters")
        if "=" not in value and not value.startswith(_DSN_SCHEMES):
            raise ValueError("must be a postgresql:// URL or a key=value connection string")
        from psycopg.conninfo import conninfo_to_dict

        try:
            parts = conninfo_to_dict(value)
        except Exception:  # psycopg's message quotes the text, which may hold a password
            raise ValueError(
                "is not a PostgreSQL connection string (write postgresql://user@host:port/dbname)"
            ) from None
        if parts.get("password"):
            raise ValueError(
                "must not hold the password: put it in .env and write password: ${NAME}"
            )
        return value

    @field_validator("password", mode="before")
    @classmethod
    def _password(cls, value: Any, info: ValidationInfo) -> Any:
        required = info.data.get("backend") == "postgresql"
        return referenced_secret(
            value, info, example="MINECLAW_DB_PASSWORD", what="password", required=required
        )

    @model_validator(mode="after")
    def _timings(self) -> StorageConfig:
        if self.lease_ttl_s <= self.lease_renew_s + self.lease_deadline_s:
            raise ValueError(
                f"lease_ttl_s ({self.lease_ttl_s:g}) must be more than lease_renew_s"
                f" ({self.lease_renew_s:g}) plus lease_deadline_s ({self.lease_deadline_s:g}):"
                " a slow renewal would otherwise lose every lease"
            )
        if self.statement_timeout_s >= self.deadline_s:
            raise ValueError(
                f"statement_timeout_s ({self.statement_timeout_s:g}) must be less than"
                f" deadline_s ({self.deadline_s:g}): a statement the server can stop ends with"
                " its own clean error before the bridge cuts the connection"
            )
        if self.commit_deadline_s > self.deadline_s:
            raise ValueError(
                f"commit_deadline_s ({self.commit_deadline_s:g}) must not be more than"
                f" deadline_s ({self.deadline_s:g})"
            )
        return self

    @property
    def password_value(self) -> str | None:
        """The resolved password, or None when none is configured."""
        return self.password.get_secret_value() or None
