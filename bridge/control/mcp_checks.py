"""What ``validate``, ``serve`` and reload can tell about the MCP servers without starting one.

- A ``stdio`` server's ``command`` must be a program: found on the bridge's ``PATH`` (the
  child looks it up there) or, when it names a path, an executable file there (relative to the
  server's ``cwd`` in the workspace). A missing one is an error at the ``command`` line, not a
  bare "Connection closed" after the start.
- A server with no ``permission`` offers its tools to every player who may chat (guests
  aside); the owner is told, once per server, unless ``unlisted: refuse`` and every named tool
  is off or gated, so nothing of that server can reach a plain player.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from bridge.control.mcp_config import McpConfig, McpServerConfig
from bridge.control.problems import Problem, format_path
from bridge.control.workspace_files import WORKSPACE_DIR
from bridge.control.yaml_strict import YamlDocument


def mcp_problems(
    config: McpConfig,
    document: YamlDocument | None,
    file: str,
    directory: Path,
    environ: Mapping[str, str],
) -> list[Problem]:
    """Errors (a command that is no program) and warnings (tools open to plain players)."""
    if not config.enabled:
        return []
    found: list[Problem] = []

    def problem(parts: tuple[str, ...], message: str, *, warning: bool = False) -> None:
        line, column = document.locate(parts) if document is not None else (None, None)
        found.append(Problem(file, line, column, format_path(parts), message, warning=warning))

    for name, server in config.servers.items():
        if not server.enabled:
            continue
        base = ("mcp", "servers", name)
        if server.transport == "stdio" and server.command is not None:
            missing = _missing_program(server, directory, environ)
            if missing is not None:
                problem((*base, "command"), missing)
        if _open_to_plain_players(server):
            problem(
                base,
                f"MCP server {name} has no permission: its tools are offered to every player "
                "who may chat (guests aside); set permission: to a node, or per tool, or "
                "unlisted: refuse with each tool you name gated",
                warning=True,
            )
    return found


def _missing_program(
    server: McpServerConfig, directory: Path, environ: Mapping[str, str]
) -> str | None:
    command = server.command
    assert command is not None
    if "/" in command:
        path = Path(command)
        if not path.is_absolute():
            path = directory / WORKSPACE_DIR / server.cwd / path
        if path.is_file() and os.access(path, os.X_OK):
            return None
        return f"{command!r} is not an executable file (relative paths start at the server's cwd)"
    search = environ.get("PATH", os.defpath)
    if shutil.which(command, path=search) is not None:
        return None
    return f"{command!r} is not a program on PATH ({search[:200]})"


def _open_to_plain_players(server: McpServerConfig) -> bool:
    if server.permission is not None:
        return False
    named_open = any(t.enabled and t.permission is None for t in server.tools.values())
    return server.unlisted_policy != "refuse" or named_open
