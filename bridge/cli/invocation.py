"""The name to print when a line tells the owner which command to run next.

`mineclaw-bridge` is on PATH only where its virtual environment is active: after `make run`
in a checkout it sits in .venv/bin, and a line saying `mineclaw-bridge console` was "command not
found". Lines name the command the way this process was started, so they work as printed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

COMMAND = "mineclaw-bridge"
WRAPPER_VARIABLE = "MINECLAW_COMMAND"
"""Set by the checkout's ./mineclaw-bridge to the path it was run as."""


def command_name() -> str:
    """How to run this command again from the same folder: the wrapper's path, the bare name
    when PATH finds this very program, else the path it was started by."""
    wrapper = os.environ.get(WRAPPER_VARIABLE, "")
    if wrapper:
        return shlex.quote(wrapper)
    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if started is None or started.name != COMMAND:
        return COMMAND  # python -m bridge (tests, the playground's child)
    found = shutil.which(COMMAND)
    if found is not None and Path(found).resolve() == started.resolve():
        return COMMAND
    return shlex.quote(str(started))


def command_line(*args: str) -> str:
    """``command_name()`` followed by ``args``, each quoted for a shell."""
    return " ".join([command_name(), *(shlex.quote(arg) for arg in args)])
