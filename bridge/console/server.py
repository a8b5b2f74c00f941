"""The console's HTTP server: uvicorn on a thread and an event loop of its own.

Why not the bridge's loop: a page that reads a million audit rows, or a browser that pages
quickly, must not delay a chat verdict. Here the console's requests wait on each other, never
on the chat path; its blocking reads run in the console loop's thread pool on connections of
their own. `start` returns once the socket is bound (port 0 picks one) or raises
`ConsoleError`; `close` stops the server and waits for its thread.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn

from bridge.console.channel import ConsoleError

log = logging.getLogger(__name__)

__all__ = ["ConsoleError", "ConsoleServer"]

START_WAIT_S = 30.0


class ConsoleServer:
    def __init__(self, server: uvicorn.Server, thread: threading.Thread, url: str) -> None:
        self._server = server
        self._thread = thread
        self.url = url

    @classmethod
    def start(
        cls,
        app: Any,
        *,
        host: str,
        port: int,
        tls: tuple[Path, Path] | None = None,
        on_stop: Callable[[], None] | None = None,
    ) -> ConsoleServer:
        bind = host.strip("[]")
        family = socket.AF_INET6 if ":" in bind else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            # Inherited by every accepted connection (Linux): a response's head and body are
            # two writes, and Nagle would hold the second for the client's delayed ACK (40 ms).
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.bind((bind, port))
        except OSError as exc:
            sock.close()
            raise ConsoleError(f"cannot serve the console on {host}:{port}: {exc}") from exc
        bound = int(sock.getsockname()[1])
        config = uvicorn.Config(
            app,
            lifespan="off",
            log_level="warning",
            access_log=False,
            server_header=False,
            ssl_certfile=None if tls is None else str(tls[0]),
            ssl_keyfile=None if tls is None else str(tls[1]),
        )
        try:
            config.load()  # the certificate and key load here, before anything is served
        except Exception as exc:  # uvicorn raises what ssl and the loaders raise
            sock.close()
            raise ConsoleError(f"the console cannot start: {exc}") from exc
        server = uvicorn.Server(config)
        failed: list[BaseException] = []

        def run() -> None:
            try:
                asyncio.run(server.serve(sockets=[sock]))
            except BaseException as exc:  # reported to start(), or logged once serving
                failed.append(exc)
                log.exception("the console server stopped")
            finally:
                sock.close()
                if on_stop is not None:
                    on_stop()

        thread = threading.Thread(target=run, name="console", daemon=True)
        thread.start()
        waited = 0.0
        while not server.started and thread.is_alive() and waited < START_WAIT_S:
            thread.join(0.01)
            waited += 0.01
        if not server.started:
            server.should_exit = True
            raise ConsoleError(f"the console did not start: {failed[0] if failed else 'timeout'}")
        scheme = "https" if tls is not None else "http"
        shown = f"[{bind}]" if family == socket.AF_INET6 else bind
        return cls(server, thread, f"{scheme}://{shown}:{bound}")

    def close(self, timeout: float = 10.0) -> None:
        self._server.should_exit = True
        self._thread.join(timeout)
