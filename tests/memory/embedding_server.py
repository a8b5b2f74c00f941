"""A real OpenAI-compatible ``/embeddings`` server on loopback for the tests.

Vectors are made from the words of each input: every word counts in the dimension of its
meaning (a small table puts ``home``, ``house`` and ``base`` in one), so two texts that share
a meaning are similar even when they share no word. It records every request body, can fail
the next requests with a status, and answers each batch in reverse order with its ``index``
fields (a client must put them back).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.providers.provider_replay_server import ReceivedRequest, ReplayServer, Reply

DIMENSIONS = 16
MEANINGS = {"home": 1, "house": 1, "base": 1, "lives": 1, "castle": 1, "diamond": 2, "gem": 2}


def vector_of(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in re.findall(r"[a-z]+", text.lower()):
        vector[MEANINGS.get(word, 3 + sum(map(ord, word)) % (DIMENSIONS - 3))] += 1.0
    return vector


class EmbeddingServer(ReplayServer):
    """The provider tests' real local HTTP server, answering ``/v1/embeddings`` itself."""

    def __init__(self) -> None:
        super().__init__()
        self.failures: list[int] = []
        self.answers: list[Any] = []
        """Bodies to answer with (status 200) before the computed ones: hostile answers."""
        self.report_usage = True
        """Computed answers carry ``usage.prompt_tokens`` (a token a word, as billed)."""

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [request.json() for request in self.requests]

    def _reply_for(self, request: ReceivedRequest) -> Reply:
        if request.method != "POST" or request.path != "/v1/embeddings":
            return _json(404, {"error": {"message": "not found"}})
        if self.failures:
            status = self.failures.pop(0)
            return _json(status, {"error": {"message": f"scripted failure {status}"}})
        if self.answers:
            return _json(200, self.answers.pop(0))
        body = request.json()
        data = [
            {"object": "embedding", "index": index, "embedding": vector_of(text)}
            for index, text in enumerate(body["input"])
        ]
        answer: dict[str, Any] = {"object": "list", "model": body["model"], "data": data[::-1]}
        if self.report_usage:
            words = sum(len(re.findall(r"[a-z]+", text.lower())) for text in body["input"])
            answer["usage"] = {"prompt_tokens": words, "total_tokens": words}
        return _json(200, answer)


def _json(status: int, answer: Any) -> Reply:
    return Reply(
        status=status, content_type="application/json", chunks=[json.dumps(answer).encode()]
    )
