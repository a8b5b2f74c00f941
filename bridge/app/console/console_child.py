"""The console's own process: ``python -m bridge.app.console.console_child``, started by the
bridge (`bridge.app.console.console_process`), never by hand.

Why a process: a browser paging the console flat out, or a page that reads a million audit
rows, held the interpreter lock the chat path needs (chat verdicts 3.4x slower), and a bug in a
page ran inside the process that holds every server's link. Here the pages have an interpreter
of their own; the link never waits for them, and a console that crashes is started again.

The bridge writes one JSON line on standard input (`ChildStart`: the folder, the channel's
port and token, the port to serve on), and keeps the pipe open: when it closes (the bridge
stopped, or died) the console stops. The child answers one line on standard output,
``serving <url>`` or ``failed <reason>``; its log goes to standard error, the bridge's.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from bridge.app.serving.storage_settings import storage_target
from bridge.console.channel import MAX_START_LINE, BridgeChannel, ChildStart
from bridge.console.remote_backend import RemoteBackend
from bridge.console.server import ConsoleServer
from bridge.console.sessions import SessionBook
from bridge.console.state import ConsoleState, template_environment
from bridge.console.web import console_app
from bridge.control.plane import ControlPlaneStore
from bridge.errors import MineclawError
from bridge.functions.review_state import ReviewBook
from bridge.functions.worker_confinement import ON, not_dumpable
from bridge.memory.store import MemoryStore


def open_console(start: ChildStart) -> ConsoleServer:
    """The console's pages served from this process, over read-only readers of the store.
    Raises `MineclawError` (the folder, the store, the port)."""
    config_dir = Path(start.config_dir)
    folder = ControlPlaneStore(config_dir)
    plane = folder.current
    config = plane.config.console
    target = dataclasses.replace(storage_target(plane, config_dir), read_only=True)
    channel = BridgeChannel(start.channel_port, start.token)
    opened: list[Any] = [channel]
    try:
        reviews = target.open_reviews()
        opened.append(reviews)
        memories = MemoryStore(target.open_state())
        opened.append(memories)
        audit = target.open_audit_pages()
        opened.append(audit)
        usage = target.open_usage()
        opened.append(usage)
        archive = target.open_archive()
        opened.append(archive)
        backend = RemoteBackend(folder, target, channel, ReviewBook(reviews), memories)
        state = ConsoleState(
            backend=backend,
            config=config,
            sessions=SessionBook(timedelta(minutes=config.session_minutes)),
            audit=audit,
            usage=usage,
            archive=archive,
            templates=template_environment(),
        )
        tls = None
        if config.tls_cert is not None and config.tls_key is not None:
            tls = (config_dir / config.tls_cert, config_dir / config.tls_key)
        return ConsoleServer.start(
            console_app(state),
            host=config.host,
            port=config.port if start.port is None else start.port,
            tls=tls,
            on_stop=lambda: _close(opened),
        )
    except MineclawError:  # nothing stays open behind the error
        _close(opened)
        raise


def _close(opened: list[Any]) -> None:
    for reader in reversed(opened):
        reader.close()


def main() -> int:
    logging.basicConfig(level=logging.WARNING, format="console: %(levelname)s %(message)s")
    # It loads the folder, the provider keys with it: as the bridge, other processes of this
    # user may not read its memory or environment (exec made it dumpable again).
    state = not_dumpable()
    if state != ON:
        logging.getLogger(__name__).warning("the console process is dumpable: %s", state)
    line = sys.stdin.buffer.readline(MAX_START_LINE)
    try:
        start = ChildStart.model_validate_json(line)
        server = open_console(start)
    except (ValueError, MineclawError) as exc:
        print(f"failed {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", flush=True)
        return 1
    print(f"serving {server.url}", flush=True)
    # The bridge keeps standard input open while it wants the console; EOF is the stop.
    while sys.stdin.buffer.read(4096):
        pass
    server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
