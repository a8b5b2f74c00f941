"""What the scripted model's demos need, added to the playground's copy of the folder.

Memory is on by default; the rest is off in a fresh folder, so with the scripted model the copy
(never the owner's folder) gets: web_fetch on, allowed to the loopback test page the scripted
model serves and to nothing else private; the demo MCP server (`demo_mcp_server.py`, stdio,
confined as an owner's server is); the ``dice`` Function; and the ``playground-pirate``
persona. What the owner's copy already names (a Function ``dice``, a server ``demo``, a soul
file of that name) is left as it is. ``added`` says what was added, for the line the playground
prints.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from bridge.control.layout import CONFIG_FILE, FUNCTIONS_FILE
from bridge.playground.scripted_model import DEMO_FUNCTION, DEMO_MCP_SERVER
from bridge.unicode_text import plain_lines

DEMO_MCP_SCRIPT = Path(__file__).with_name("demo_mcp_server.py")
PERSONA = "playground-pirate"
SOUL = f"""---
name: {PERSONA}
description: The playground's demo persona, a cheerful pirate.
---
You are a cheerful pirate. Call every player "matey".
"""
DICE = {
    "name": DEMO_FUNCTION,
    "description": "Roll a die of the given number of sides (the playground's demo Function).",
    "enabled": True,
    "capabilities": [],
    "parameters": {
        "type": "object",
        "properties": {"sides": {"type": "integer", "minimum": 2, "maximum": 100}},
        "required": ["sides"],
        "additionalProperties": False,
    },
    "on_call": (
        "async function onCall(ctx, api) {\n"
        "  const rolled = 1 + Math.floor(Math.random() * ctx.args.sides);\n"
        '  return {status: "ok", output: {rolled: rolled, of: ctx.args.sides}};\n'
        "}\n"
    ),
}


def _document(path: Path) -> dict[str, Any] | None:
    """``path``'s YAML mapping ({} when missing); None when it cannot be read as one (the
    bridge then names its problem, as ``serve`` would)."""
    if not path.is_file():
        return {}
    try:
        document = yaml.safe_load(plain_lines(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if document is None:
        return {}
    return document if isinstance(document, dict) else None


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _write(path: Path, document: dict[str, Any]) -> None:
    if path.is_symlink():
        path.unlink()  # a symlink to the owner's file is replaced, never written through
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), "utf-8")


def add_demos(copy: Path, page_port: int) -> list[str]:
    """The demos added to ``copy``, each named for the playground's line."""
    added: list[str] = []
    config = _document(copy / CONFIG_FILE)
    if config is not None:
        config.setdefault("schema", 1)
        web = _mapping(config.get("web"))
        ports = [p for p in web.get("allow_ports") or [80, 443] if isinstance(p, int)]
        hosts = [h for h in web.get("allow_private_hosts") or [] if isinstance(h, str)]
        web.update(
            enabled=True,
            allow_ports=sorted({*ports, page_port}),
            allow_private_hosts=sorted({*hosts, "127.0.0.1"}),
        )
        config["web"] = web
        added.append("web_fetch (allowed to the test page's loopback port)")
        mcp = _mapping(config.get("mcp"))
        servers = _mapping(mcp.get("servers"))
        if DEMO_MCP_SERVER not in servers:
            servers[DEMO_MCP_SERVER] = {
                "transport": "stdio",
                "command": sys.executable,
                "args": [str(DEMO_MCP_SCRIPT)],
            }
            mcp.update(enabled=True, servers=servers)
            config["mcp"] = mcp
            added.append(f"the {DEMO_MCP_SERVER} MCP server")
        _write(copy / CONFIG_FILE, config)
    functions = _document(copy / FUNCTIONS_FILE)
    if functions is not None:
        found = functions.get("functions")
        listed: list[Any] = found if isinstance(found, list) else []
        if not any(isinstance(f, dict) and f.get("name") == DEMO_FUNCTION for f in listed):
            functions.setdefault("schema", 1)
            functions.setdefault("api_version", 1)
            functions["functions"] = [*listed, DICE]
            _write(copy / FUNCTIONS_FILE, functions)
            added.append(f"the {DEMO_FUNCTION} Function")
    soul = copy / "workspace" / "souls" / f"{PERSONA}.md"
    linked = any(folder.is_symlink() for folder in (soul.parent.parent, soul.parent))
    if not linked and not soul.exists():  # a linked folder is the owner's: never written
        soul.parent.mkdir(parents=True, exist_ok=True)
        soul.write_text(SOUL, encoding="utf-8")
        added.append(f"the {PERSONA} persona")
    return added
