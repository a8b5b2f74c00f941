"""What every command shares: the exit-code rule, the console, and the one-line refusals.

Exit codes, the same for every command (README, "Exit codes"):
0 done and nothing wrong (warnings may be shown); 1 the command ran and found problems (invalid
configuration, a denied command, a call or request that failed); 2 it could not run as asked
(bad arguments, a missing or unrecognised configuration folder).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from bridge.cli.invocation import command_name
from bridge.control import ConfigLoadError, ControlPlane, load_control_plane
from bridge.control.folder import folder_refusal

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2

# Piped output is read by programs and pagers: no line is cut or folded at a guessed width.
PIPE_WIDTH = 1_000


def make_console(*, stderr: bool = False, highlight: bool = True) -> Console:
    """A console that fits the terminal, or never wraps when the output is not a terminal."""
    stream: TextIO = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr, highlight=highlight)
    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() and int(columns) > 0 else PIPE_WIDTH
    return Console(stderr=stderr, width=width, soft_wrap=False, highlight=highlight)


def refuse_folder(directory: Path) -> int | None:
    """``EXIT_USAGE`` after one line on stderr when ``directory`` is no configuration folder."""
    refusal = folder_refusal(directory)
    if refusal is None:
        return None
    print_error(refusal)
    return EXIT_USAGE


def print_error(message: str) -> None:
    make_console(stderr=True).print(f"[red]error:[/red] {escape(message)}")


def load_folder(directory: Path, console: Console) -> ControlPlane | int:
    """The folder's control plane; or, after the refusal or the first problems and where to see
    them all, the exit code (``EXIT_USAGE`` for no folder, ``EXIT_PROBLEMS`` for an invalid one)."""
    refused = refuse_folder(directory)
    if refused is not None:
        return refused
    try:
        return load_control_plane(directory)
    except ConfigLoadError as exc:
        console.print(f"[red]error:[/red] the configuration in {escape(str(directory))} is invalid")
        for problem in exc.problems[:10]:
            console.print(f"  {escape(str(problem))}")
        console.print(f"run `{command_name()} validate` for the full list")
        return EXIT_PROBLEMS
