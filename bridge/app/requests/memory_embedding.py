"""Memory vectors wired to the configuration in force: ``memory.embeddings`` names a provider
of ``providers.yml`` and a model; its ``/embeddings`` endpoint (`bridge.memory.embeddings`)
embeds each memory in the background and each question before a recall.

The background catch-up embeds, a batch at a time, every memory whose vector is not of the
model in force: new memories, and all of them after the model changed (the old vectors keep
serving nothing: a search uses only vectors of the model in force, and keywords for the rest).
Progress goes to the log and to ``/mineclaw status``. It runs when poked (at link-up, after a
reload, after a memory is written or a turn indexed) and stops when nothing is left; a failure
is logged and waits for the next poke. A question's vector is asked with a short deadline: a
slow or failing endpoint costs that recall its vectors, never the turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import httpx

from bridge.control import ControlPlane
from bridge.errors import StoreError
from bridge.memory.embeddings import (
    Embedded,
    EmbeddingClient,
    EmbeddingError,
    EmbeddingSettings,
)
from bridge.memory.store import MemoryStore

log = logging.getLogger(__name__)

QUESTION_DEADLINE_S = 5.0
"""The longest a recall waits for its question's vector before it goes on with keywords."""


def embedding_settings(plane: ControlPlane) -> EmbeddingSettings | None:
    """The endpoint ``memory.embeddings`` names (None: not set, or its key is missing)."""
    memory = plane.config.memory
    provider_id, model = memory.embedding_provider, memory.embedding_model
    if provider_id is None or model is None:
        return None
    provider = plane.providers.providers.get(provider_id)
    if provider is None or provider.api_key_missing:
        return None
    retry = provider.retry
    return EmbeddingSettings(
        base_url=provider.api.base_url,
        model=model,
        api_key=provider.api_key.get_secret_value(),
        batch_size=memory.embedding_batch,
        timeout_s=provider.timeout.read_s,
        attempts=retry.max_attempts,
        backoff_s=retry.initial_backoff_ms / 1000,
        max_backoff_s=retry.max_backoff_ms / 1000,
    )


class MemoryEmbedder:
    """The process's embedding client for the plane in force, and the catch-up task."""

    def __init__(
        self,
        store: MemoryStore,
        plane: Callable[[], ControlPlane],
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        count: Callable[[str, int, bool], Awaitable[None]] | None = None,
    ) -> None:
        self._store = store
        self._plane = plane
        self._transport = transport
        self._count = count
        """Told what each call cost: the ``provider/model`` reference, the tokens, and whether
        they are estimated (the provider reported no usage)."""
        self._client: EmbeddingClient | None = None
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self.done = 0
        self.total = 0
        self.last_error: str | None = None
        self.changed = asyncio.Event()
        """Set whenever a catch-up ends or makes progress (tests wait on it)."""

    @property
    def model(self) -> str | None:
        settings = embedding_settings(self._plane())
        return None if settings is None else settings.model

    def _current(self) -> EmbeddingClient | None:
        settings = embedding_settings(self._plane())
        client = self._client
        if client is not None and client.settings == settings:
            return client
        if client is not None:
            old = client
            asyncio.get_running_loop().create_task(old.aclose())
        self._client = (
            None if settings is None else EmbeddingClient(settings, transport=self._transport)
        )
        return self._client

    async def embed_question(self, question: str) -> list[float] | None:
        client = self._current()
        if client is None:
            return None
        try:
            embedded = await asyncio.wait_for(client.embed_counted([question]), QUESTION_DEADLINE_S)
            [vector] = embedded.vectors
        except (EmbeddingError, TimeoutError, ValueError) as exc:
            log.warning("question not embedded, keywords alone: %s", exc)
            return None
        await self._counted(embedded)
        return vector

    async def _counted(self, embedded: Embedded) -> None:
        """Every token the owner pays for is counted, the vectors' too."""
        memory = self._plane().config.memory
        if self._count is None or embedded.tokens <= 0:
            return
        reference = f"{memory.embedding_provider}/{memory.embedding_model}"
        try:
            await self._count(reference, embedded.tokens, embedded.estimated)
        except Exception:  # the ledger's failure must not cost the recall its vectors
            log.exception("memory embedding usage not counted")

    def poke(self) -> None:
        """Catch up now. From another thread (a reload runs in one) the poke is handed to the
        loop that poked last; before any loop did, nothing happens (the link-up pokes)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self.poke)
            return
        self._loop = loop
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = loop.create_task(self._catch_up())

    async def _catch_up(self) -> None:
        try:
            while True:
                self._again = False
                client = self._current()
                if client is None:
                    return
                await self._embed_all(client)
                if not self._again:
                    return
        finally:
            self.changed.set()

    async def _embed_all(self, client: EmbeddingClient) -> None:
        model = client.model
        batch = max(1, client.settings.batch_size)
        try:
            self.done, self.total = await asyncio.to_thread(self._store.embedded_count, model)
            while True:
                pending = await asyncio.to_thread(self._store.unembedded, model, batch)
                if not pending:
                    break
                embedded = await client.embed_counted([text for _, text in pending])
                await self._counted(embedded)
                vectors = embedded.vectors
                pairs = [(memory_id, v) for (memory_id, _), v in zip(pending, vectors, strict=True)]
                await asyncio.to_thread(self._store.set_embeddings, model, pairs)
                self.done, self.total = await asyncio.to_thread(self._store.embedded_count, model)
                log.info("memory embeddings (%s): %d of %d", model, self.done, self.total)
                self.changed.set()
            self.last_error = None
        except (EmbeddingError, StoreError) as exc:
            self.last_error = str(exc)
            log.error("memory embeddings (%s) stopped: %s", model, exc)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def status(self) -> str:
        """The ``/mineclaw status`` words for the vectors."""
        model = self.model
        if model is None:
            return "keywords only (memory.embeddings not set)"
        state = f"embeddings {model}: {self.done} of {self.total} embedded"
        if self._task is not None and not self._task.done():
            state += ", catching up"
        if self.last_error:
            state += f", stopped: {self.last_error}"
        return state

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
