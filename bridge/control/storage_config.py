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

from pydantic import Field, ValidationInfo, field_validator

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

    @property
    def password_value(self) -> str | None:
        """The resolved password, or None when none is configured."""
        return self.password.get_secret_value() or None
