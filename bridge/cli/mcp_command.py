"""`mcp tools` and `mcp review`: what the configured MCP servers offer, and the owner's review.

``mcp tools`` connects to every server of ``config.yml``'s ``mcp`` section once (no restarts),
and prints each tool as the model would see it: its name, review state and digest, the
description and the input schema (a third party's text, shown for the owner to read), then the
tools not offered and why. Header and environment values are never printed.

``mcp review NAME...`` records the review of those tools' description and schema as shown now
(``mcp.require_review``), in the same review state as Functions, audited as ``mcp.reviewed``.
A running bridge offers them after ``/mineclaw reload``; a tool whose description or schema
changes later has a new digest and waits for a review again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from bridge.app.serving.folder_verdict import folder_verdict
from bridge.app.serving.storage_settings import storage_target
from bridge.cli.invocation import command_name
from bridge.cli.output import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, make_console, print_error
from bridge.cli.review_command import confirmed, system_user
from bridge.control.layout import DEFAULT_CONFIG_DIR
from bridge.control.mcp_config import McpConfig
from bridge.control.plane import ControlPlane
from bridge.control.workspace_files import WORKSPACE_DIR
from bridge.errors import StoreError
from bridge.functions.review_state import ReviewBook
from bridge.store.audit_sink import MemoryAudit

# The MCP SDK loads when one of these commands runs, not when the command line is built (every
# `mineclaw-bridge` command, serve included, registers this module).
if TYPE_CHECKING:
    from bridge.mcp.connection import ServerConnection
    from bridge.mcp.discovery import OfferedTool
WAIT_S = 180.0
"""One bound on connecting to every server (each has its own connect_timeout_ms too)."""


def register(subparsers: Any) -> None:
    mcp = subparsers.add_parser("mcp", help="the MCP servers of config.yml: tools and reviews")
    actions = mcp.add_subparsers(dest="mcp_command", metavar="ACTION", required=True)
    tools = actions.add_parser("tools", help="connect once and show every server's tools")
    tools.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    tools.set_defaults(handler=run_tools)
    review = actions.add_parser(
        "review", help="accept tools' description and schema as shown now (mcp.require_review)"
    )
    review.add_argument("names", nargs="+", metavar="NAME", help="mcp__<server>__<tool>")
    review.add_argument("--as", dest="reviewer", default=None, metavar="NAME")
    review.add_argument("--yes", action="store_true", help="accept without asking")
    review.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    review.set_defaults(handler=run_review)


def run_tools(args: argparse.Namespace) -> int:
    plane = _plane(args.config)
    if plane is None:
        return EXIT_PROBLEMS
    console = make_console()
    book = _book(plane, args.config)
    connections = asyncio.run(_listed(plane))
    from bridge.mcp.connection import State

    for connection in connections:
        state = connection.state.value if connection.state is not State.READY else "connected"
        console.print(f"[bold]{escape(connection.name)}[/bold]: {escape(state)}", highlight=False)
        if connection.state is not State.READY:
            console.print(f"  {escape(connection.reason)}", highlight=False)
        for tool in connection.listing.offered:
            reviewed = book is not None and book.has(tool.name, tool.digest)
            mark = "reviewed" if reviewed else "needs review"
            console.print(
                f"  {escape(tool.name)} {escape(f'[{mark}]')} {tool.digest[:12]}\n"
                f"    {escape(tool.description)}\n"
                f"    {escape(json.dumps(tool.parameters, sort_keys=True))}",
                highlight=False,
            )
        for refused in connection.listing.refused:
            console.print(
                f"  [red]not offered[/red] {escape(refused.remote)}: {escape(refused.reason)}",
                highlight=False,
            )
    failed = any(c.state is not State.READY for c in connections)
    return EXIT_PROBLEMS if failed else EXIT_OK


def run_review(args: argparse.Namespace) -> int:
    plane = _plane(args.config)
    if plane is None:
        return EXIT_PROBLEMS
    console = make_console()
    listed = {t.name: t for c in asyncio.run(_listed(plane)) for t in c.listing.offered}
    unknown = [name for name in args.names if name not in listed]
    if unknown:
        print_error(f"no MCP server offers {', '.join(unknown)} now ({command_name()} mcp tools)")
        return EXIT_USAGE
    chosen = [listed[name] for name in args.names]
    for tool in chosen:
        console.print(
            f"{escape(tool.name)} {tool.digest[:12]}\n  {escape(tool.description)}\n"
            f"  {escape(json.dumps(tool.parameters, sort_keys=True))}",
            highlight=False,
        )
    if not args.yes and not confirmed(", ".join(args.names)):
        console.print("not reviewed")
        return EXIT_PROBLEMS
    reviewer = args.reviewer or system_user()
    target = storage_target(plane, args.config)
    try:
        with target.open_reviews() as reviews:
            audit = target.open_audit()
            try:
                for tool in chosen:
                    reviews.record(tool.name, _reviewed_text(tool), tool.digest, reviewer)
                    audit.record(
                        "mcp.reviewed",
                        {"tool": tool.name, "digest": tool.digest, "reviewer": reviewer},
                    )
            finally:
                audit.close()
    except StoreError as exc:
        print_error(str(exc))
        return EXIT_PROBLEMS
    console.print(
        f"[green]reviewed[/green] {escape(', '.join(args.names))} by {escape(reviewer)}; a running"
        " bridge offers them after /mineclaw reload"
    )
    return EXIT_OK


def _reviewed_text(tool: OfferedTool) -> str:
    """What was accepted, kept beside the digest (the store's diff reads it)."""
    schema = json.dumps(tool.parameters, sort_keys=True, indent=2)
    return f"{tool.description}\n\n{schema}"


def _plane(config_dir: Path) -> ControlPlane | None:
    verdict = folder_verdict(config_dir)
    if verdict.plane is None:
        for problem in verdict.errors:
            print(str(problem), file=sys.stderr)
        print_error(f"the folder is invalid: fix it first ({command_name()} validate)")
        return None
    return verdict.plane


def _book(plane: ControlPlane, config_dir: Path) -> ReviewBook | None:
    try:
        reviews = storage_target(plane, config_dir).open_reviews()
    except StoreError:
        return None
    book = ReviewBook(reviews)
    book.close()
    return book


async def _listed(plane: ControlPlane) -> list[ServerConnection]:
    """Every configured server, connected once (no restarts), whatever mcp.enabled says."""
    from bridge.mcp.clients import McpClients
    from bridge.mcp.connection import State

    settled = (State.READY, State.GAVE_UP)
    once = {
        name: server.model_copy(update={"max_restarts": 0})
        for name, server in plane.config.mcp.servers.items()
    }
    clients = McpClients(audit=MemoryAudit(), redact=plane.redact)
    changed = asyncio.Event()
    clients.add_listener(changed.set)
    clients.apply(McpConfig(enabled=True, servers=once), plane.directory / WORKSPACE_DIR)
    try:
        async with asyncio.timeout(WAIT_S):
            while any(c.state not in settled for c in clients.connections.values()):
                changed.clear()
                await changed.wait()
    except TimeoutError:
        pass
    connections = list(clients.connections.values())
    # aclose sets each CLOSED: what was seen is what the owner reads.
    states = {c.name: (c.state, c.reason) for c in connections}
    await clients.aclose()
    for connection in connections:
        connection.state, connection.reason = states[connection.name]
    return connections
