"""Vectors from a real OpenAI-compatible /embeddings server on loopback: batches keep their
order, retryable failures are retried and others are not, bad answers are refused; the hybrid
search finds a memory by meaning and keeps the owner a filter."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from bridge.memory.embeddings import EmbeddingClient, EmbeddingError, EmbeddingSettings
from bridge.memory.store import MemoryStore
from tests.storage_backends import Backend

from .embedding_server import EmbeddingServer, vector_of
from .test_store import ALEX, STEVE, memory


@pytest.fixture
async def server() -> AsyncIterator[EmbeddingServer]:
    started = EmbeddingServer()
    await started.start()
    yield started
    await started.stop()


async def no_sleep(_: float) -> None:
    return None


def client(server: EmbeddingServer, **settings: object) -> EmbeddingClient:
    return EmbeddingClient(
        EmbeddingSettings(base_url=server.base_url, model="nomic", **settings),  # type: ignore[arg-type]
        sleep=no_sleep,
    )


async def test_batches_keep_their_order(server: EmbeddingServer) -> None:
    texts = [f"text number {n} about a house" for n in range(7)]
    made = client(server, batch_size=3)
    try:
        vectors = await made.embed(texts)
    finally:
        await made.aclose()
    assert vectors == [vector_of(text) for text in texts]
    assert [len(body["input"]) for body in server.bodies] == [3, 3, 1]
    assert {body["model"] for body in server.bodies} == {"nomic"}


async def test_what_each_batch_cost_is_the_providers_usage_or_an_estimate_said_so(
    server: EmbeddingServer,
) -> None:
    texts = ["my base is at the river", "a gem house", "x" * 40]
    made = client(server, batch_size=2)
    try:
        billed = await made.embed_counted(texts)
        assert billed.vectors == [vector_of(text) for text in texts]
        assert (billed.tokens, billed.estimated) == (6 + 3 + 1, False)
        server.report_usage = False
        guessed = await made.embed_counted(texts)
    finally:
        await made.aclose()
    # Four characters a token, rounded up, per text: 23, 11 and 40 characters.
    assert (guessed.tokens, guessed.estimated) == (6 + 3 + 10, True)


async def test_a_retryable_failure_is_tried_again_and_others_are_not(
    server: EmbeddingServer,
) -> None:
    made = client(server, attempts=3)
    try:
        server.failures = [503, 429]
        assert await made.embed(["a house"]) == [vector_of("a house")]
        assert len(server.bodies) == 3
        server.failures = [400]
        with pytest.raises(EmbeddingError, match="HTTP 400: .*scripted failure 400"):
            await made.embed(["a house"])
        assert len(server.bodies) == 4
        server.failures = [503, 503, 503]
        with pytest.raises(EmbeddingError, match="HTTP 503"):
            await made.embed(["a house"])
    finally:
        await made.aclose()


async def test_an_unreachable_endpoint_is_an_error_naming_it() -> None:
    made = EmbeddingClient(
        EmbeddingSettings(base_url="http://127.0.0.1:9/v1", model="m", attempts=2), sleep=no_sleep
    )
    try:
        with pytest.raises(EmbeddingError, match="127.0.0.1:9"):
            await made.embed(["x"])
    finally:
        await made.aclose()


@pytest.fixture
def store(backend: Backend) -> Iterator[MemoryStore]:
    with MemoryStore(backend.target.open_state()) as opened:
        yield opened


def test_the_hybrid_search_finds_by_meaning_and_keeps_the_owner_a_filter(
    store: MemoryStore,
) -> None:
    mine = memory("my castle is at 120 64 -300")
    theirs = memory("my house is at 5 70 5", owner=ALEX, name="Alex")
    gem = memory("diamonds are traded at spawn", scope="server")
    for kept in (mine, theirs, gem):
        store.add(kept)
    assert store.unembedded("nomic", 10) == [
        (mine.memory_id, mine.text),
        (theirs.memory_id, theirs.text),
        (gem.memory_id, gem.text),
    ]
    store.set_embeddings("nomic", [(m.memory_id, vector_of(m.text)) for m in (mine, theirs, gem)])
    assert store.embedded_count("nomic") == (3, 3)
    assert store.embedded_count("other") == (0, 3)
    question = "where is my home?"
    # No word in common: keywords alone find nothing.
    assert store.search(question, asker_uuid=STEVE, limit=5) == []
    found = store.ranked(question, vector_of(question), "nomic", asker_uuid=STEVE, limit=5)
    assert [hit.memory.text for hit in found][0] == mine.text
    assert theirs.memory_id not in {hit.memory.memory_id for hit in found}
    # Alex's question is as close to Steve's castle as can be: still not his.
    alex = store.ranked(mine.text, vector_of(mine.text), "nomic", asker_uuid=ALEX, limit=5)
    assert mine.memory_id not in {hit.memory.memory_id for hit in alex}
    # Vectors of another model are not used.
    assert store.ranked(question, vector_of(question), "other", asker_uuid=STEVE, limit=5) == []
    assert store.forget(mine.memory_id, owner_uuid=STEVE) is not None
    found = store.ranked(question, vector_of(question), "nomic", asker_uuid=STEVE, limit=5)
    assert mine.memory_id not in {hit.memory.memory_id for hit in found}


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ({"data": [{"index": 0, "embedding": [1.0]}]}, "1 vectors for 2 texts"),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}, "index"),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 5, "embedding": [1.0]}]}, "index"),
        ({"data": [{"index": 0, "embedding": []}, {"index": 1, "embedding": [1.0]}]}, "empty"),
        ({"data": [{"index": 0, "embedding": ["x"]}, {"index": 1, "embedding": [1.0]}]}, "usable"),
        ({"data": "nothing"}, "usable"),
        ({"error": "no data"}, "usable"),
        ([1, 2], "usable"),
    ],
)
async def test_an_answer_without_one_vector_per_text_is_refused(
    server: EmbeddingServer, answer: object, error: str
) -> None:
    server.answers = [answer]
    made = client(server, attempts=1)
    try:
        with pytest.raises(EmbeddingError, match=error):
            await made.embed(["one", "two"])
    finally:
        await made.aclose()


async def test_vectors_of_different_lengths_are_refused(server: EmbeddingServer) -> None:
    server.answers = [
        {"data": [{"index": 0, "embedding": [1.0, 2.0]}]},
        {"data": [{"index": 0, "embedding": [1.0]}]},
    ]
    made = client(server, batch_size=1)
    try:
        with pytest.raises(EmbeddingError, match="different lengths"):
            await made.embed(["one", "two"])
    finally:
        await made.aclose()
