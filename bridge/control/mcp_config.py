"""``config.yml``'s ``mcp`` section: the owner's MCP servers, offered as tools. Off by default.

Each server is named (the name is part of every tool name the model sees,
``mcp__<server>__<tool>``) and reached over ``stdio`` (a child process of the bridge) or
streamable ``http``. Nothing from the process environment reaches a stdio server unless it is
named in ``env``; header values may hold ``${NAME}`` references to ``.env``, resolved here and
known to the redactor as secrets (they are never shown in diagnostics).

Per tool the owner may switch it off, gate it with a permission node, mark it paid and bound its
result. A setting names a tool by what its name looks like (``name_skeleton``: case,
``-``/``_``/``.``, look-alike letters), so ``Delete-Page`` or ``de1ete_page`` is the tool
the owner called ``delete_page``. A tool the owner did not list gets what ``unlisted`` says: the
server's settings (``offer``), those only once reviewed (``review``, the default as soon as the
server has any per-tool setting), or nothing (``refuse``).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any, Literal

from pydantic import Field, PrivateAttr, ValidationInfo, field_validator, model_validator

from bridge.control.base import StrictModel
from bridge.control.secrets import (
    EMBEDDED_REFERENCE,
    ENV_NAME_PATTERN,
    context_environ,
    lookup,
    unset_reference,
)
from bridge.control.tools_file import PERMISSION_NODE
from bridge.control.web_config import http_url
from bridge.unicode_text import name_skeleton

SERVER_NAME = re.compile(r"(?=.{1,24}$)[a-z][a-z0-9]*(_[a-z0-9]+)*")
"""Lower case, digits and single underscores: ``__`` separates the parts of a tool's name."""
_ENV_NAME = re.compile(ENV_NAME_PATTERN)
_HEADER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]{0,63}")
_REMOTE_TOOL = re.compile(r"[A-Za-z0-9_\-.]{1,64}")


def _permission(value: str | None) -> str | None:
    if value is not None and not PERMISSION_NODE.fullmatch(value):
        raise ValueError("must be a permission node such as mineclaw.tool.mcp_wiki")
    return value


class McpToolConfig(StrictModel):
    """One tool of a server as the owner wants it (unset fields: the server's)."""

    enabled: bool = True
    permission: str | None = Field(default=None, min_length=1, max_length=128)
    cost: Literal["free", "paid"] | None = None
    max_result_chars: int | None = Field(default=None, ge=256, le=200_000)

    @field_validator("permission")
    @classmethod
    def _node(cls, value: str | None) -> str | None:
        return _permission(value)


class McpServerConfig(StrictModel):
    """One MCP server and how its tools are offered."""

    enabled: bool = True
    transport: Literal["stdio", "http"]
    command: str | None = Field(default=None, min_length=1, max_length=4096)
    args: list[str] = Field(default_factory=list, max_length=64)
    cwd: str = Field(default=".", min_length=1, max_length=1024)
    env: list[str] = Field(default_factory=list, max_length=64)
    # Beyond the system's programs and libraries, Python and its cwd: what a stdio server may read.
    read: list[str] = Field(default_factory=list, max_length=64)
    url: str | None = Field(default=None, max_length=2048)
    headers: dict[str, str] = Field(default_factory=dict, max_length=32)
    connect_timeout_ms: int = Field(default=10_000, ge=500, le=120_000)
    call_timeout_ms: int = Field(default=30_000, ge=500, le=600_000)
    max_restarts: int = Field(default=5, ge=0, le=100)
    restart_backoff_ms: int = Field(default=1_000, ge=0, le=60_000)
    memory_mb: int = Field(default=4096, ge=64, le=65_536)
    open_files: int = Field(default=256, ge=16, le=65_536)
    permission: str | None = Field(default=None, min_length=1, max_length=128)
    cost: Literal["free", "paid"] = "free"
    max_result_chars: int = Field(default=8_000, ge=256, le=200_000)
    shared: bool = False
    """The owner's word that the server answers the same whoever asks: its results may then
    stay in the shared public session; otherwise each result is the asker's alone."""
    tools: dict[str, McpToolConfig] = Field(default_factory=dict, max_length=256)
    # What a tool not named in ``tools`` gets; unset: review when ``tools`` names any, else offer.
    unlisted: Literal["offer", "review", "refuse"] | None = None

    _env_values: dict[str, str] = PrivateAttr(default_factory=dict)
    _header_values: dict[str, str] = PrivateAttr(default_factory=dict)

    @field_validator("permission")
    @classmethod
    def _node(cls, value: str | None) -> str | None:
        return _permission(value)

    @field_validator("args")
    @classmethod
    def _args(cls, value: list[str]) -> list[str]:
        for arg in value:
            if len(arg) > 4096 or "\x00" in arg:
                raise ValueError("each argument is at most 4096 characters without NUL")
        return value

    @field_validator("read")
    @classmethod
    def _read(cls, value: list[str]) -> list[str]:
        for path in value:
            if not path or len(path) > 4096 or "\x00" in path:
                raise ValueError("each path is 1-4096 characters without NUL")
        return value

    @field_validator("cwd")
    @classmethod
    def _cwd(cls, value: str) -> str:
        path = PurePosixPath(value)
        if path.is_absolute() or ".." in path.parts or "\\" in value or "\x00" in value:
            raise ValueError("must be a relative folder inside the workspace, without '..'")
        return value

    @field_validator("env")
    @classmethod
    def _env(cls, value: list[str]) -> list[str]:
        for name in value:
            if not _ENV_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not an environment variable name")
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return http_url(value)

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            if not _HEADER_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not an HTTP header name")
            if any(ch in text for ch in "\r\n\x00") or len(text) > 4096:
                raise ValueError(f"header {name}: at most 4096 characters on one line")
        return value

    @field_validator("tools")
    @classmethod
    def _tool_names(cls, value: dict[str, McpToolConfig]) -> dict[str, McpToolConfig]:
        seen: dict[str, str] = {}
        for name in value:
            if not _REMOTE_TOOL.fullmatch(name):
                raise ValueError(f"{name!r} is not an MCP tool name (letters, digits, _ - .)")
            other = seen.setdefault(name_skeleton(name), name)
            if other != name:
                raise ValueError(
                    f"{other!r} and {name!r} name the same tool (settings match a name whatever "
                    "its case, - _ . and look-alike letters)"
                )
        return value

    @model_validator(mode="after")
    def _transport_fields(self, info: ValidationInfo) -> McpServerConfig:
        if self.transport == "stdio":
            if self.command is None:
                raise ValueError("transport stdio needs command")
            if self.url is not None or self.headers:
                raise ValueError("url and headers are for transport http")
        else:
            if self.url is None:
                raise ValueError("transport http needs url")
            if self.command is not None or self.args or self.env or self.cwd != "." or self.read:
                raise ValueError("command, args, env, cwd and read are for transport stdio")
        environ = context_environ(info)
        for name in self.env:
            resolved = lookup(name, environ)
            if resolved is None:
                raise ValueError(f"env: {unset_reference(name, environ)}")
            self._env_values[name] = resolved
        for header, text in self.headers.items():
            self._header_values[header] = _resolved(text, environ, header)
        return self

    @property
    def env_values(self) -> dict[str, str]:
        """The variables named in ``env`` with their values (the child's whole environment)."""
        return dict(self._env_values)

    @property
    def header_values(self) -> dict[str, str]:
        """The headers with every ``${NAME}`` resolved: secrets, never to show."""
        return dict(self._header_values)

    @property
    def unlisted_policy(self) -> Literal["offer", "review", "refuse"]:
        """What a tool not named in ``tools`` gets (``unlisted``, or its default)."""
        if self.unlisted is not None:
            return self.unlisted
        return "review" if self.tools else "offer"

    def listed(self, name: str) -> McpToolConfig | None:
        """The owner's own settings of the tool a server calls ``name``, matched by what the
        name looks like; None when the owner named no such tool."""
        key = name_skeleton(name)
        for own_name, own in self.tools.items():
            if name_skeleton(own_name) == key:
                return own
        return None

    def for_tool(self, name: str, *, late: bool = False) -> McpToolConfig:
        """The owner's settings of tool ``name`` with the server's filled in. ``late``: the tool
        was not in the server's first listing (it came with a ``list_changed`` or a restart):
        it gets nothing more than the server's defaults, only what the owner's setting makes
        stricter (off, paid, a smaller bound; the server's node when it has one)."""
        own = self.listed(name) or McpToolConfig()
        if late:
            return McpToolConfig(
                enabled=own.enabled,
                permission=self.permission if self.permission is not None else own.permission,
                cost="paid" if "paid" in (own.cost, self.cost) else "free",
                max_result_chars=min(
                    own.max_result_chars or self.max_result_chars, self.max_result_chars
                ),
            )
        return McpToolConfig(
            enabled=own.enabled,
            permission=own.permission if own.permission is not None else self.permission,
            cost=own.cost or self.cost,
            max_result_chars=own.max_result_chars or self.max_result_chars,
        )


def _resolved(text: str, environ: Any, header: str) -> str:
    def value(match: re.Match[str]) -> str:
        found = lookup(match.group(1), environ)
        if found is None:
            raise ValueError(f"headers.{header}: {unset_reference(match.group(1), environ)}")
        return found

    return EMBEDDED_REFERENCE.sub(value, text)


class McpConfig(StrictModel):
    """The MCP client: off until ``enabled``; servers by name."""

    enabled: bool = False
    # Offer a tool only while its description and schema, as shown, have an owner's review.
    require_review: bool = False
    servers: dict[str, McpServerConfig] = Field(default_factory=dict, max_length=32)

    @field_validator("servers")
    @classmethod
    def _names(cls, value: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
        for name in value:
            if not SERVER_NAME.fullmatch(name):
                raise ValueError(
                    f"server name {name!r} must be lower case letters and digits with single "
                    "underscores, at most 24 characters"
                )
        return value
