"""The `mineclaw-bridge` command line.

Each command family lives in its own module with a ``register(subparsers)`` function that adds
its subcommands and sets ``handler`` on them; a handler takes the parsed namespace and returns
the exit code.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

from bridge import __version__

# Command families, in the order `--help` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "bridge.cli.config_commands",
    "bridge.cli.serve",
    "bridge.cli.try_command",
    "bridge.cli.provider_commands",
    "bridge.cli.function_commands",
    "bridge.cli.tool_commands",
    "bridge.cli.mcp_command",
    "bridge.cli.console_command",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mineclaw-bridge",
        description="Mineclaw bridge: the AI agent's side of a Minecraft server.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    code: int = handler(args)
    return code
