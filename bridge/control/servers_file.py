"""``servers.yml``: the backend servers of a network that link to this bridge, each by its id.

Optional: without the file the bridge serves one server, the default one, whose plugin proves
``link.token`` (today's setup, unchanged). Each entry names a server id (what the plugin's
``plugin-link.yml`` says in ``server-id``) and its own token, which must be an environment
reference (``${NAME}``, from the process environment or ``.env``): a token is a credential and
never sits in a YAML file. Tokens are never shown in a problem, a log line or ``validate``.

A file reference problem (an unset variable, a token too short, two servers with one token)
names the file, line and field like every other problem, and refuses the plane: a server whose
plugin could not authenticate is better refused at start than found out on the day it links.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from bridge.control.base import StrictModel
from bridge.control.secrets import Secret, lookup, unset_reference, whole_reference

SERVERS_FILE = "servers.yml"
MAX_SERVERS = 256
MIN_TOKEN_CHARS = 32
"""As ``link.token``: a shorter token is guessable enough to matter."""
SERVER_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
"""The same pattern as ``server_id`` in the link's ``hello``."""
DEFAULT_SERVER_ID = "default"
"""The server of ``link.token``: a plugin that names no id. Reserved, not a ``servers.yml`` key."""

ServerId = Annotated[str, Field(pattern=SERVER_ID.pattern + "$")]


POLICY_FILE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_./-]{0,254}\.yml")
"""A policy file of one server: a ``.yml`` path inside the configuration folder."""


def _policy_path(value: str | None) -> str | None:
    if value is None:
        return None
    parts = value.split("/")
    if not POLICY_FILE.fullmatch(value) or any(part in ("", ".", "..") for part in parts):
        raise ValueError(
            "must be a .yml file inside the configuration folder, as a relative path such as "
            "servers/survival/whitelist.yml (no .. and no leading /)"
        )
    return value


class ServerEntry(StrictModel):
    """One backend server: the token its plugin proves (resolved from ``${NAME}``) and, where
    the owner sets them, its own policy files, each replacing the network-wide file of the same
    kind for this server only."""

    token: Secret
    whitelist: str | None = None
    tools: str | None = None
    functions: str | None = None
    messages: str | None = None

    @field_validator("whitelist", "tools", "functions", "messages")
    @classmethod
    def _inside_the_folder(cls, value: str | None) -> str | None:
        return _policy_path(value)

    @field_validator("token", mode="before")
    @classmethod
    def _resolve_token(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, str):
            return value  # the strict type check says "expected text"
        name = whole_reference(value)
        if name is None:
            raise ValueError(
                "must be an environment reference such as ${LOBBY_LINK_TOKEN} (put the token in "
                ".env), never the token itself"
            )
        environ: Mapping[str, str] = (info.context or {}).get("environ", {})
        token = lookup(name, environ)
        if token is None:
            raise ValueError(unset_reference(name, environ))
        if len(token.strip()) < MIN_TOKEN_CHARS:
            raise ValueError(
                f"${{{name}}} holds fewer than {MIN_TOKEN_CHARS} characters; use a long random "
                "token (e.g. mineclaw-bridge's link.token format: 43 characters)"
            )
        return token.strip()


class ServersFile(StrictModel):
    """The whole of ``servers.yml``."""

    schema_: Literal[1] = Field(alias="schema")
    servers: dict[ServerId, ServerEntry] = Field(default_factory=dict, max_length=MAX_SERVERS)

    @field_validator("servers")
    @classmethod
    def _distinct(cls, value: dict[str, ServerEntry]) -> dict[str, ServerEntry]:
        if DEFAULT_SERVER_ID in value:
            raise ValueError(
                f"'{DEFAULT_SERVER_ID}' is the server of link.token (a plugin naming no "
                "server-id); give this server another id"
            )
        return value

    def shared_tokens(self) -> list[tuple[str, str]]:
        """``(server, earlier server)`` for each server whose token an earlier one has: each
        plugin must prove its own server (the loader reports these at the token's line)."""
        seen: dict[str, str] = {}
        shared: list[tuple[str, str]] = []
        for server_id, entry in self.servers.items():
            token = entry.token.get_secret_value()
            if token in seen:
                shared.append((server_id, seen[token]))
            else:
                seen[token] = server_id
        return shared

    def token(self, server_id: str) -> str | None:
        entry = self.servers.get(server_id)
        return None if entry is None else entry.token.get_secret_value()


NO_SERVERS = ServersFile.model_validate({"schema": 1})
"""What a folder without ``servers.yml`` has: no named servers, only the default one."""
