"""Start a stdio MCP server confined: ``python -m bridge.mcp.child MEMORY_MB OPEN_FILES KEEP --
COMMAND ARGS...``.

The SDK starts this module as the child; it sets the resource limits (address space, open
files, no core files), moves to its own session (a Ctrl-C for the bridge is not the server's)
and replaces itself with the server with an environment of exactly the variables named in KEEP
(comma separated; the bridge passes their values): nothing else of the bridge's environment,
not even ``PATH``, is inherited. The command is looked up with the bridge's ``PATH`` first, so
``python3`` or ``npx`` work without ``PATH`` in the server's environment.

Standard library only: it runs before the server, in the server's folder.
"""

from __future__ import annotations

import os
import resource
import shutil
import sys


def main(argv: list[str]) -> int:
    try:
        split = argv.index("--")
        memory_mb, open_files, keep = int(argv[0]), int(argv[1]), argv[2]
        command = argv[split + 1 :]
    except (ValueError, IndexError):
        print("usage: child MEMORY_MB OPEN_FILES KEEP -- COMMAND ARGS...", file=sys.stderr)
        return 2
    if not command:
        print("no command", file=sys.stderr)
        return 2
    memory = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        os.setsid()
    except OSError:
        pass  # already a session leader
    names = [name for name in keep.split(",") if name]
    environment = {name: os.environ[name] for name in names if name in os.environ}
    executable = shutil.which(command[0]) or command[0]
    try:
        os.execve(executable, command, environment)
    except OSError as exc:
        print(f"cannot start {command[0]!r}: {exc.strerror}", file=sys.stderr)
        return 127
    return 0  # not reached: execve replaced this process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
