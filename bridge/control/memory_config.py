"""``config.yml``'s ``memory`` section: personal and server memories, recalled before turns.

On by default (the keyword index needs no model and works offline); the ``remember`` and
``recall`` tools are offered only while ``enabled`` is true, and automatic recall adds at most
``top_k`` memories to a private turn, ``public_top_k`` to a public turn or a guest's.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from bridge.control.base import StrictModel

MAX_MEMORY_CHARS = 500
"""``max_chars``'s default."""


class MemoryConfig(StrictModel):
    """What the agent keeps about players and the server (docs/memory.md)."""

    enabled: bool = True
    top_k: int = Field(default=5, ge=0, le=50)
    public_top_k: int = Field(default=2, ge=0, le=50)
    recall_max_tokens: int = Field(default=400, ge=50, le=8000)
    max_chars: int = Field(default=MAX_MEMORY_CHARS, ge=20, le=1000)
    max_per_player: int = Field(default=200, ge=1, le=10_000)
    # provider/model: the provider of providers.yml whose /embeddings endpoint makes vectors.
    embeddings: str | None = Field(
        default=None, pattern=r"^[a-z0-9][a-z0-9_-]{0,63}/\S{1,200}$", max_length=265
    )
    embedding_batch: int = Field(default=64, ge=1, le=512)
    # The recall floors (bridge.memory.recall.RecallFloor; docs/memory.md says how the defaults
    # were measured): a memory found by meaning needs this cosine similarity to the question,
    # one found by words this share of the question's words.
    min_similarity: float = Field(default=0.45, ge=-1.0, le=1.0)
    min_overlap: float = Field(default=0.34, ge=0.0, le=1.0)

    @property
    def embedding_provider(self) -> str | None:
        return None if self.embeddings is None else self.embeddings.split("/", 1)[0]

    @property
    def embedding_model(self) -> str | None:
        return None if self.embeddings is None else self.embeddings.split("/", 1)[1]

    @model_validator(mode="after")
    def _public_at_most_private(self) -> MemoryConfig:
        if self.public_top_k > self.top_k:
            raise ValueError("public_top_k must not be larger than top_k")
        return self
