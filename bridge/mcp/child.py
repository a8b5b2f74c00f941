"""Start a stdio MCP server confined: ``python -m bridge.mcp.child MEMORY_MB OPEN_FILES KEEP
CONFINE -- COMMAND ARGS...``.

The SDK-shaped transport starts this module as the child; it sets the resource limits (address
space, open files, no core files), moves to its own session (a Ctrl-C for the bridge is not the
server's), confines itself and replaces itself with the server with an environment of exactly
the variables named in KEEP (comma separated; the bridge passes their values): nothing else of
the bridge's environment, not even ``PATH``, is inherited. The command is looked up with the
bridge's ``PATH`` first, so ``python3`` or ``npx`` work without ``PATH`` in the server's
environment.

CONFINE is JSON: ``{"read": [...], "write": [...]}``. The layers (``bridge.confinement``):
no_new_privs; Landlock, reading and executing only beneath ``read`` (and the command's own
folder), writing only beneath ``write`` (the server's own folder, ``/dev/null``), so the
bridge's ``.env``, ``link.token`` and ``data/`` are out of reach; as root, a drop to
``nobody`` (its own folder handed to it first). Network is left alone: a server may need it.
The layers' report is this process's first line on stderr (``CONFINEMENT_PREFIX`` and JSON),
written before the server runs, so the server cannot forge it.

Standard library only (and ``bridge.confinement``, which is too): it runs before the server,
in the server's folder.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys

from bridge.confinement.layers import describe, drop_user, landlock, no_new_privs, unprivileged_user

CONFINEMENT_PREFIX = "mineclaw-confinement: "


def main(argv: list[str]) -> int:
    try:
        split = argv.index("--")
        memory_mb, open_files, keep = int(argv[0]), int(argv[1]), argv[2]
        confine = json.loads(argv[3])
        readable, writable = list(confine["read"]), list(confine["write"])
        command = argv[split + 1 :]
    except (ValueError, IndexError, KeyError, TypeError):
        print("usage: child MEMORY_MB OPEN_FILES KEEP CONFINE -- COMMAND ARGS...", file=sys.stderr)
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
    layers = confined(executable, readable, writable)
    print(CONFINEMENT_PREFIX + json.dumps(layers), file=sys.stderr, flush=True)
    try:
        os.execve(executable, command, environment)
    except OSError as exc:
        print(f"cannot start {command[0]!r}: {exc.strerror}", file=sys.stderr)
        print(f"(confinement: {describe(layers)})", file=sys.stderr)
        return 127
    return 0  # not reached: execve replaced this process


def confined(executable: str, readable: list[str], writable: list[str]) -> dict[str, str]:
    nobody = unprivileged_user()  # before Landlock hides /etc/passwd
    closed = None if nobody is None else closed_folder(executable, nobody.pw_uid, nobody.pw_gid)
    if nobody is not None and closed is None:
        for folder in writable:
            if os.path.isdir(folder):
                os.chown(folder, nobody.pw_uid, nobody.pw_gid)
    program = os.path.dirname(os.path.realpath(executable))
    layers = {"no_new_privs": no_new_privs()}
    layers["landlock"] = landlock([*readable, program, "/proc/self"], writable)
    if closed is not None:
        # Dropping to nobody would only make the exec fail: say so and keep the bridge's user.
        layers["user"] = f"unavailable: nobody cannot run {executable} ({closed} is closed to it)"
    else:
        layers["user"] = drop_user(nobody, "the MCP server")
    return layers


def closed_folder(executable: str, uid: int, gid: int) -> str | None:
    """The first folder on the program's real path (or the program itself) that ``uid``
    cannot pass or run by its permission bits, or None when it can run the program."""
    path = os.path.realpath(executable)
    parts = path.split(os.sep)
    for end in range(2, len(parts) + 1):
        here = os.sep.join(parts[:end]) or os.sep
        try:
            info = os.stat(here)
        except OSError:
            return here
        if info.st_uid == uid:
            allowed = info.st_mode & 0o100
        elif info.st_gid == gid:
            allowed = info.st_mode & 0o010
        else:
            allowed = info.st_mode & 0o001
        if not allowed:
            return here
    return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
