"""An HTTP server on loopback that records every request and answers each with a schema.

A schema that names this server's URL is the probe: if anything the bridge does with the schema
opens the URL, ``fetched`` says so (the server answers, so a fetch never hangs the test)."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator


class FetchRecorder:
    def __init__(self) -> None:
        self.fetched: list[str] = []
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                recorder.fetched.append(self.path)
                body = b'{"type": "string", "maxLength": 1}'
                self.send_response(200)
                self.send_header("Content-Type", "application/schema+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    @contextlib.contextmanager
    def serving(self) -> Iterator[FetchRecorder]:
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()
            thread.join()


@contextlib.contextmanager
def fetch_recorder() -> Iterator[FetchRecorder]:
    with FetchRecorder().serving() as recorder:
        yield recorder
