"""Vectors from an OpenAI-compatible ``/embeddings`` endpoint (Ollama, vLLM, llama.cpp and
LiteLLM serve it): ``{"model", "input": [texts]}`` in, ``data[i].embedding`` out.

Texts go in batches of ``batch_size``; each answer is put back in the order of its ``index``
field (a server may answer out of order), and an answer that does not hold exactly one vector
per text, all of one length, is refused. A batch that fails with a retryable error (a lost
connection, a timeout, 408, 409, 429, 5xx) is tried again under the provider's retry settings
(``attempts`` in all, the pause doubling from ``backoff_s`` up to ``max_backoff_s``); any
other failure is an `EmbeddingError` naming the status and the provider's own message.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from bridge.errors import MineclawError
from bridge.tls_trust import context_for

# The estimate where a provider reports no usage: the turns' own ratio (bridge.turns.tokens,
# a layer above this one).
CHARS_PER_TOKEN = 4
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
MAX_ERROR_CHARS = 300


class EmbeddingError(MineclawError):
    """The endpoint did not give the vectors (after the retries a failure allows)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddingSettings:
    """Where and how to ask: ``base_url`` ends before ``/embeddings``; ``api_key`` goes in a
    Bearer header (none when empty)."""

    base_url: str
    model: str
    api_key: str = field(default="", repr=False)
    batch_size: int = 64
    timeout_s: float = 30.0
    attempts: int = 3
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0


@dataclass(frozen=True, slots=True)
class Embedded:
    """Vectors and what they cost: the provider's ``usage`` where every batch reported it, an
    estimate (``estimated``) for the batches that did not."""

    vectors: list[list[float]]
    tokens: int
    estimated: bool


class EmbeddingClient:
    """One endpoint and model. ``transport`` and ``sleep`` for tests."""

    def __init__(
        self,
        settings: EmbeddingSettings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.settings = settings
        headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
        self._http = httpx.AsyncClient(
            headers=headers,
            timeout=settings.timeout_s,
            transport=transport,
            trust_env=False,
            verify=context_for(settings.base_url, trust_env=False),
        )
        self._sleep = sleep

    @property
    def model(self) -> str:
        return self.settings.model

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in the order of ``texts``."""
        return (await self.embed_counted(texts)).vectors

    async def embed_counted(self, texts: Sequence[str]) -> Embedded:
        """The vectors and the tokens the provider billed for them (see `Embedded`)."""
        vectors: list[list[float]] = []
        tokens, estimated = 0, False
        size = max(1, self.settings.batch_size)
        for first in range(0, len(texts), size):
            batch = list(texts[first : first + size])
            got, used = await self._batch(batch)
            vectors.extend(got)
            if used is None:
                used, estimated = estimated_tokens(batch), True
            tokens += used
        if vectors and len({len(v) for v in vectors}) != 1:
            raise EmbeddingError("the endpoint gave vectors of different lengths")
        return Embedded(vectors, tokens, estimated)

    async def _batch(self, texts: list[str]) -> tuple[list[list[float]], int | None]:
        settings = self.settings
        url = settings.base_url.rstrip("/") + "/embeddings"
        pause = settings.backoff_s
        for attempt in range(1, max(1, settings.attempts) + 1):
            try:
                response = await self._http.post(
                    url, json={"model": settings.model, "input": texts}
                )
            except httpx.HTTPError as exc:
                failure = EmbeddingError(f"{url}: {type(exc).__name__}: {exc}")
                retry = True
            else:
                if response.status_code == 200:
                    return _vectors(response, len(texts)), _billed(response)
                text = response.text[:MAX_ERROR_CHARS]
                failure = EmbeddingError(f"{url}: HTTP {response.status_code}: {text}")
                retry = response.status_code in RETRYABLE_STATUS
            if not retry or attempt >= settings.attempts:
                raise failure
            await self._sleep(pause)
            pause = min(pause * 2, settings.max_backoff_s)
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        await self._http.aclose()


def _billed(response: httpx.Response) -> int | None:
    """``usage.prompt_tokens`` (or ``total_tokens``) of an answer, None where it says none."""
    try:
        usage = response.json().get("usage")
    except (ValueError, AttributeError):
        return None
    if not isinstance(usage, dict):
        return None
    for key in ("prompt_tokens", "total_tokens"):
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31:
            return value
    return None


def estimated_tokens(texts: Sequence[str]) -> int:
    """What a batch costs where the provider said nothing: the turns' estimate, per text."""
    return sum(-(-len(text) // CHARS_PER_TOKEN) for text in texts)


def _vectors(response: httpx.Response, count: int) -> list[list[float]]:
    try:
        body: Any = response.json()
        data = body["data"]
        ordered: list[list[float] | None] = [None] * count
        for position, entry in enumerate(data):
            index = entry.get("index", position)
            if not isinstance(index, int) or not 0 <= index < count or ordered[index]:
                raise ValueError(f"index {index!r} out of place")
            vector = [float(x) for x in entry["embedding"]]
            if not vector or not all(math.isfinite(x) for x in vector):
                raise ValueError("an empty or non-finite vector")
            ordered[index] = vector
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise EmbeddingError(f"the /embeddings answer is not usable: {exc}") from None
    if any(vector is None for vector in ordered):
        raise EmbeddingError(f"the /embeddings answer has {len(data)} vectors for {count} texts")
    return [vector for vector in ordered if vector is not None]
