"""Vectors as stored (packed float32 on SQLite, ``real[]`` on PostgreSQL) and the hybrid score.

Ranking runs in the bridge over the memories the asker may see (a few hundred at most: their
own and the server's), so the owner stays a filter of the query that reads the vectors, and
both backends rank alike. The hybrid score is ``HYBRID_WEIGHT`` of the cosine similarity plus
the rest of the keyword score scaled to 0-1 within the search.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence

HYBRID_WEIGHT = 0.6
"""The share of the vector similarity in the hybrid score (the keyword score has the rest)."""


def pack(vector: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(vector)}f", *vector)


def unpack(data: bytes) -> list[float]:
    return list(struct.unpack(f"<{len(data) // 4}f", data))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b):
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def hybrid(similarity: float, keyword: float, best_keyword: float) -> float:
    """The score of one memory: its cosine similarity and its keyword score relative to the
    best keyword score of the search (0 when it matched no word)."""
    scaled = keyword / best_keyword if best_keyword > 0 else 0.0
    return HYBRID_WEIGHT * similarity + (1 - HYBRID_WEIGHT) * scaled
