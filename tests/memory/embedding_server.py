"""A real OpenAI-compatible ``/embeddings`` server on loopback for the tests.

Vectors are made from the words of each input: every word counts in the dimension of its
meaning (a small table puts ``home``, ``house`` and ``base`` in one), so two texts that share
a meaning are similar even when they share no word. It records every request body, can fail
the next requests with a status, and answers each batch in reverse order with its ``index``
fields (a client must put them back).
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

DIMENSIONS = 16
MEANINGS = {"home": 1, "house": 1, "base": 1, "lives": 1, "castle": 1, "diamond": 2, "gem": 2}


def vector_of(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in re.findall(r"[a-z]+", text.lower()):
        vector[MEANINGS.get(word, 3 + sum(map(ord, word)) % (DIMENSIONS - 3))] += 1.0
    return vector


class EmbeddingServer:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.failures: list[int] = []
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name.lower() == "content-length":
                        length = int(value.strip())
                body = json.loads(await reader.readexactly(length)) if length else {}
                status, answer = self._answer(lines[0], body)
                payload = json.dumps(answer).encode()
                writer.write(
                    f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n"
                    f"content-length: {len(payload)}\r\n\r\n".encode()
                    + payload
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def _answer(self, request_line: str, body: dict[str, Any]) -> tuple[int, Any]:
        self.bodies.append(body)
        if not request_line.startswith("POST /v1/embeddings"):
            return 404, {"error": {"message": "not found"}}
        if self.failures:
            status = self.failures.pop(0)
            return status, {"error": {"message": f"scripted failure {status}"}}
        data = [
            {"object": "embedding", "index": index, "embedding": vector_of(text)}
            for index, text in enumerate(body["input"])
        ]
        return 200, {"object": "list", "model": body["model"], "data": list(reversed(data))}
