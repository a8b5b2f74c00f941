"""``tools validate`` (the catalogue with each tool's status) and ``tools call`` (one workspace
tool run offline through the same path a turn uses)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bridge.control import ConfigLoadError, load_control_plane
from bridge.control.files import read_regular_file
from bridge.control.layout import DEFAULT_CONFIG_DIR, MAX_YAML_BYTES, TOOLS_FILE, default_bytes
from bridge.control.workspace_files import WORKSPACE_DIR
from bridge.control.yaml_strict import load_strict_yaml
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.assembly import WORKSPACE_HANDLERS, redactor_for, registry_for
from bridge.tools.file_tools import workspace_handlers
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.registry import CallContext, CatalogueEntry, ToolRegistry
from bridge.tools.workspace import Workspace

EXIT_OK = 0
EXIT_FAILED = 1  # validate: invalid entries; call: the tool answered with an error
EXIT_REFUSED = 2  # call: not a tool that can run offline, or the configuration does not load

_NOT_BUILT_REASON = {
    "reads_game": "needs the plugin link (not built yet)",
    "dispatches_commands": "needs the plugin link (not built yet)",
    "runs_functions": "needs the Function runtime (not wired yet)",
}


def register(subparsers: Any) -> None:
    tools = subparsers.add_parser("tools", help="inspect and try the native tools")
    actions = tools.add_subparsers(dest="tools_command", metavar="ACTION", required=True)

    validate = actions.add_parser("validate", help="list every tool with its status; runs nothing")
    validate.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    validate.set_defaults(handler=run_validate)

    call = actions.add_parser("call", help="run list, read or grep offline and print the result")
    call.add_argument("name", help="the tool name from tools.yml")
    call.add_argument("--args", dest="arguments", default="{}", metavar="JSON")
    call.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    call.set_defaults(handler=run_call)


def run_validate(args: argparse.Namespace) -> int:
    console = Console()
    try:
        data = read_regular_file(
            args.config / TOOLS_FILE, label=TOOLS_FILE, max_bytes=MAX_YAML_BYTES[TOOLS_FILE]
        )
        source = TOOLS_FILE if data is not None else f"{TOOLS_FILE} (built-in default)"
        document = load_strict_yaml(
            data if data is not None else default_bytes(TOOLS_FILE), TOOLS_FILE
        )
    except ConfigLoadError as exc:
        for problem in exc.problems:
            console.print(f"[red]error:[/red] {escape(str(problem))}")
        return EXIT_FAILED
    handlers = workspace_handlers(Workspace(args.config / WORKSPACE_DIR))
    registry, file_problems = ToolRegistry.from_document(document, handlers)
    console.print(catalogue_table(source, registry.catalogue))
    for problem in file_problems:
        console.print(f"[red]error:[/red] {escape(str(problem))}")
    invalid = sum(1 for entry in registry.catalogue if entry.status == "invalid")
    available = sum(1 for entry in registry.catalogue if entry.status == "available")
    ok = not invalid and not file_problems
    verdict = "[green]valid[/green]" if ok else "[red]invalid[/red]"
    console.print(f"{verdict}: {available} available, {invalid} invalid entr(y/ies)")
    return EXIT_OK if ok else EXIT_FAILED


def catalogue_table(source: str, catalogue: tuple[CatalogueEntry, ...]) -> Table:
    table = Table(title=escape(source))
    for column in ("tool", "handler", "status", "permission", "notes"):
        table.add_column(column)
    for entry in catalogue:
        if entry.status == "invalid":
            notes = "\n".join(str(problem) for problem in entry.problems)
        elif entry.status == "not_built" and entry.effect is not None:
            notes = _NOT_BUILT_REASON.get(entry.effect, "")
        elif entry.status == "disabled":
            notes = "enabled: false"
        else:
            notes = ""
        colour = {"available": "green", "invalid": "red"}.get(entry.status, "yellow")
        table.add_row(
            escape(entry.name),
            escape(entry.handler or "-"),
            f"[{colour}]{entry.status}[/{colour}]",
            escape(entry.permission or "(everyone)"),
            escape(notes),
        )
    return table


def run_call(args: argparse.Namespace) -> int:
    try:
        plane = load_control_plane(args.config)
    except ConfigLoadError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_REFUSED
    registry = registry_for(plane)
    entry = next((e for e in registry.catalogue if e.name == args.name), None)
    if entry is None:
        print(f"error: tools.yml has no tool named {args.name!r}", file=sys.stderr)
        return EXIT_REFUSED
    if entry.handler not in WORKSPACE_HANDLERS:
        message = (
            f"error: {args.name} is a {entry.handler} tool; only list, read and grep run offline"
        )
        print(message, file=sys.stderr)
        return EXIT_REFUSED
    if entry.status != "available":
        print(f"error: {args.name} is {entry.status} in tools.yml", file=sys.stderr)
        return EXIT_REFUSED
    # The owner at the console holds every node, so no tool is hidden from them.
    granted = frozenset(e.permission for e in registry.catalogue if e.permission)
    invoker = ToolInvoker(
        registry.for_player(granted),
        cooldowns=Cooldowns(cooldown_ms=0),
        redactor=redactor_for(plane),
        audit=MemoryAudit(),
    )
    context = CallContext(
        turn_id="cli", call_id="cli", player_uuid="console", player_name="console"
    )
    outcome = asyncio.run(invoker.invoke(args.name, args.arguments, context))
    print(
        json.dumps(outcome.model_dump(mode="json", exclude_none=True), indent=2, ensure_ascii=False)
    )
    return EXIT_OK if outcome.ok else EXIT_FAILED
