"""The recall floors, measured on a labelled set, and what a public turn may carry.

``data/recall_labels.yml`` holds memories a server's players and owner might keep, questions
players ask and which memories answer each (none for questions no memory answers).
``data/recall_vectors.json`` holds their vectors from all-MiniLM-L6-v2 (quantized, mean
pooled, normalised), made once for this set. With no floor every recall brought the best
memories whatever the question (a locker code for "what should I cook"); these tests hold the
default floors to what they were measured to do, and run the search on both backends.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bridge.control.memory_config import MemoryConfig
from bridge.memory.query import terms_of
from bridge.memory.recall import (
    MIN_OVERLAP,
    MIN_SIMILARITY,
    MemoryRecall,
    RecallFloor,
    RecallSettings,
    overlap,
    search,
)
from bridge.memory.records import SERVER_OWNER, Memory
from bridge.memory.store import MemoryStore
from bridge.memory.vectors import cosine
from bridge.redaction import Redactor
from bridge.turns.ports import PlayerRef, TurnContext
from tests.storage_backends import Backend

from .test_store import NOW, STEVE

DATA = Path(__file__).parent / "data"
LABELS: dict[str, Any] = yaml.safe_load((DATA / "recall_labels.yml").read_text())
VECTORS: dict[str, list[float]] = json.loads((DATA / "recall_vectors.json").read_text())["vectors"]
MEMORIES: dict[str, str] = LABELS["memories"]
QUESTIONS: list[dict[str, Any]] = LABELS["questions"]
MODEL = "minilm"
SERVER_KEYS = {"portal", "shop", "pvp", "grief", "stronghold", "mayor", "restart", "discord"}


def pairs() -> Iterator[tuple[str, str, bool]]:
    for question in QUESTIONS:
        for key in MEMORIES:
            yield question["q"], key, key in question["relevant"]


def test_the_default_similarity_floor_keeps_answers_and_drops_the_rest() -> None:
    kept_relevant = kept_unrelated = relevant = unrelated = 0
    for question, key, is_relevant in pairs():
        passes = cosine(VECTORS[question], VECTORS[MEMORIES[key]]) >= MIN_SIMILARITY
        relevant += is_relevant
        unrelated += not is_relevant
        kept_relevant += passes and is_relevant
        kept_unrelated += passes and not is_relevant
    # Measured: 19 of 23 answers kept, 2 of 747 other pairs (a horse for "my pet", a wheat
    # farm for "farm experience").
    assert kept_relevant / relevant >= 0.8
    assert kept_unrelated / unrelated <= 0.005
    for question in QUESTIONS:
        if not question["relevant"]:
            best = max(cosine(VECTORS[question["q"]], VECTORS[m]) for m in MEMORIES.values())
            assert best < MIN_SIMILARITY, question["q"]


def test_config_yml_defaults_are_the_measured_floors() -> None:
    config = MemoryConfig()
    assert (config.min_similarity, config.min_overlap) == (MIN_SIMILARITY, MIN_OVERLAP)


def test_the_default_overlap_floor_recalls_nothing_for_questions_nothing_answers() -> None:
    kept_relevant = relevant = 0
    for question in QUESTIONS:
        terms = terms_of(question["q"])
        for key, text in MEMORIES.items():
            share = overlap(terms, text)
            if key in question["relevant"]:
                relevant += 1
                kept_relevant += share >= MIN_OVERLAP
            elif not question["relevant"]:
                assert share < MIN_OVERLAP, (question["q"], key)
    # Measured: 10 of 23 by words alone (the vectors find the rest).
    assert kept_relevant / relevant >= 0.4


class ShippedVectors:
    model = MODEL

    async def embed_question(self, question: str) -> list[float] | None:
        return VECTORS[question]


@pytest.fixture
def labelled(backend: Backend) -> Iterator[MemoryStore]:
    with MemoryStore(backend.target.open_state()) as store:
        for key, text in MEMORIES.items():
            server = key in SERVER_KEYS
            store.add(
                Memory(
                    memory_id=f"m-{key}",
                    scope="server" if server else "personal",
                    owner_uuid=SERVER_OWNER if server else STEVE,
                    owner_name="Steve",
                    text=text,
                    source="tool",
                    created_at=NOW,
                )
            )
        store.set_embeddings(MODEL, [(f"m-{key}", VECTORS[t]) for key, t in MEMORIES.items()])
        yield store


async def found(store: MemoryStore, question: str, **kw: Any) -> list[str]:
    hits = await search(
        store,
        ShippedVectors(),
        question,
        asker_uuid=STEVE,
        limit=5,
        floor=RecallFloor(),
        **kw,
    )
    return [hit.memory.memory_id for hit in hits]


async def test_a_question_no_memory_answers_recalls_nothing(labelled: MemoryStore) -> None:
    for question in QUESTIONS:
        if not question["relevant"]:
            assert await found(labelled, question["q"]) == [], question["q"]
    assert "m-allergy" in await found(labelled, "what should I cook for dinner")
    assert "m-locker" not in await found(labelled, "what should I cook for dinner")


async def test_a_public_turn_recalls_only_server_and_shared_memories(
    labelled: MemoryStore,
) -> None:
    port = MemoryRecall(labelled, RecallSettings(), redactor=Redactor(), vectors=ShippedVectors())
    steve = PlayerRef(STEVE, "Steve")
    question = "what is the code of my locker?"
    private = await port.recall(TurnContext("t", "s", steve, lane_id="ai-1"), question)
    public = await port.recall(TurnContext("t", "s", steve, lane_id="public"), question)
    assert private is not None and "4711" in private
    assert public is None or "4711" not in public
    assert await found(labelled, "where is the stronghold", public=True) == ["m-stronghold"]
    shared = labelled.share("m-locker", STEVE, shared=True)
    assert shared is not None and shared.shared
    public = await port.recall(TurnContext("t", "s", steve, lane_id="public"), question)
    assert public is not None and "4711" in public
    # Nobody else can share it, and an unshared one goes back to private.
    assert labelled.share("m-base", "someone-else", shared=True) is None
    labelled.share("m-locker", STEVE, shared=False)
    public = await port.recall(TurnContext("t", "s", steve, lane_id="public"), question)
    assert public is None or "4711" not in public
