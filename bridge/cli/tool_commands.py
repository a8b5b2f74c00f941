"""``tools validate`` (the catalogue with each tool's status) and ``tools call`` (one workspace
tool run offline through the same path a turn uses)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from bridge.cli.output import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    make_console,
    print_error,
    refuse_folder,
)
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
from bridge.tools.skill_index import READ_SKILL, skill_reader
from bridge.tools.workspace import Workspace

# What offline cannot know, said per kind of tool: these run through the server, so they are
# bound when the plugin links (the entry itself, its schema, permission and handler, are checked
# here like every other).
_MEMORY_NOTE = "runs in serve while config.yml has memory.enabled: true (the default)"
_MEMORY_EFFECTS = ("reads_memory", "writes_memory")
_LINKED_NOTE = {
    "reads_game": "runs once the plugin is linked (the server answers it)",
    "dispatches_commands": (
        "runs once the plugin is linked; each command is also decided by whitelist.yml then"
    ),
    "runs_functions": (
        "runs once the plugin is linked; `functions validate` reviews the Functions it calls"
    ),
    "asks_players": "runs once the plugin is linked (it can show prompts)",
    "reads_web": "runs in serve while config.yml has web.enabled: true (never offline)",
    "reads_memory": _MEMORY_NOTE,
    "writes_memory": _MEMORY_NOTE,
}
_OFFLINE_NOTE = "runs offline too (`tools call`)"


def register(subparsers: Any) -> None:
    tools = subparsers.add_parser("tools", help="inspect and try the native tools")
    actions = tools.add_subparsers(dest="tools_command", metavar="ACTION", required=True)

    validate = actions.add_parser("validate", help="list every tool with its status; runs nothing")
    validate.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    validate.set_defaults(handler=run_validate)

    call = actions.add_parser(
        "call", help="run list, read, grep or read_skill offline and print the result"
    )
    call.add_argument("name", help="the tool name from tools.yml")
    call.add_argument("--args", dest="arguments", default="{}", metavar="JSON")
    call.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    call.set_defaults(handler=run_call)


def run_validate(args: argparse.Namespace) -> int:
    refused = refuse_folder(args.config)
    if refused is not None:
        return refused
    console = make_console()
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
        return EXIT_PROBLEMS
    handlers = {
        **workspace_handlers(Workspace(args.config / WORKSPACE_DIR)),
        READ_SKILL: skill_reader(()),  # bound only to say it runs offline; nothing is read
    }
    registry, file_problems = ToolRegistry.from_document(document, handlers)
    console.print(catalogue_table(source, registry.catalogue))
    for problem in file_problems:
        console.print(f"[red]error:[/red] {escape(str(problem))}")
    statuses = [entry.status for entry in registry.catalogue]
    invalid = statuses.count("invalid")
    offline, linked, disabled = (statuses.count(s) for s in ("available", "not_built", "disabled"))
    web = sum(1 for e in registry.catalogue if e.status == "not_built" and e.effect == "reads_web")
    memory = sum(
        1 for e in registry.catalogue if e.status == "not_built" and e.effect in _MEMORY_EFFECTS
    )
    linked -= web + memory
    console.print(
        "Checked here: each entry's fields, its parameters schema, permission node and handler. "
        "Checked once the plugin is linked: the game and command tools themselves, and which "
        "permission nodes each player holds."
    )
    ok = not invalid and not file_problems
    verdict = "[green]valid[/green]" if ok else "[red]invalid[/red]"
    console.print(
        f"{verdict}: {offline + linked + web + memory} ok ({offline} run offline, {linked} once"
        f" the plugin is linked, {web} with web.enabled, {memory} with memory.enabled),"
        f" {disabled} disabled, {invalid} invalid"
    )
    return EXIT_OK if ok else EXIT_PROBLEMS


def catalogue_table(source: str, catalogue: tuple[CatalogueEntry, ...]) -> Table:
    table = Table(title=escape(source))
    for column in ("tool", "handler", "status", "permission", "notes"):
        table.add_column(column)
    for entry in catalogue:
        shown: str = entry.status
        if entry.status == "invalid":
            notes = "\n".join(str(problem) for problem in entry.problems)
        elif entry.status == "not_built" and entry.effect is not None:
            shown, notes = "ok", _LINKED_NOTE.get(entry.effect, "runs once the plugin is linked")
        elif entry.status == "disabled":
            notes = "enabled: false"
        else:
            shown, notes = "ok", _OFFLINE_NOTE
        colour = {"ok": "green", "invalid": "red"}.get(shown, "yellow")
        table.add_row(
            escape(entry.name),
            escape(entry.handler or "-"),
            f"[{colour}]{shown}[/{colour}]",
            escape(entry.permission or "(everyone)"),
            escape(notes),
        )
    return table


def run_call(args: argparse.Namespace) -> int:
    refused = refuse_folder(args.config)
    if refused is not None:
        return refused
    try:
        plane = load_control_plane(args.config)
    except ConfigLoadError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_PROBLEMS
    registry = registry_for(plane)
    entry = next((e for e in registry.catalogue if e.name == args.name), None)
    if entry is None:
        print_error(f"tools.yml has no tool named {args.name!r}")
        return EXIT_USAGE
    if entry.handler not in WORKSPACE_HANDLERS:
        print_error(
            f"{args.name} is a {entry.handler} tool; it runs once the plugin is linked, "
            "and only list, read, grep and read_skill run offline"
        )
        return EXIT_USAGE
    if entry.status != "available":
        shown = "disabled" if entry.status == "disabled" else entry.status
        print_error(f"{args.name} is {shown} in tools.yml")
        return EXIT_USAGE
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
    return EXIT_OK if outcome.ok else EXIT_PROBLEMS
