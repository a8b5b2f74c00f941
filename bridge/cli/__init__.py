"""The `mineclaw-bridge` command line.

Each command family lives in its own module with a ``register(subparsers)`` function that adds
its subcommands and sets ``handler`` on them; a handler takes the parsed namespace and returns
the exit code.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import sys
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
    code: int | None = None
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.print_help()
            return 2
        code = handler(args)
        sys.stdout.flush()  # here, where a closed pipe can still be answered quietly
        return code
    except BrokenPipeError:
        return _reader_gone(code)


def _reader_gone(code: int | None) -> int:
    """The output's reader closed it (`| head`): no traceback for what it chose not to read.
    Python flushes stdout again at exit, so stdout now goes nowhere. The command's own exit code
    when it had finished, else 1 (README, Exit codes)."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return 1 if code is None else code
