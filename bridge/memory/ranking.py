"""BM25 over the memories one search may return, on SQLite.

FTS5's own ``bm25()`` reads each term's whole posting list to count the documents holding it,
so its cost grows with every memory of every player (a common word is in thousands). A search
already reads only the asker's and the server's postings (the owner is in the MATCH), so the
candidates are few; they are ranked here, with each term's document frequency counted among the
memories the asker may see (a word common in other players' notes says nothing about theirs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from bridge.memory.query import words_of

K1 = 1.2
B = 0.75


def bm25_scores(terms: Sequence[str], texts: Sequence[str], visible: int) -> list[float]:
    """One score per text (higher is better). ``visible``: how many memories the asker may
    see in all (the collection the frequencies are counted in); every text holds a term."""
    if not texts:
        return []
    # Only the query's terms are counted in each text: a few list counts, no word bag.
    counts: list[list[int]] = []
    lengths: list[int] = []
    for text in texts:
        words = words_of(text)
        lengths.append(len(words))
        counts.append([words.count(term) for term in terms])
    average = sum(lengths) / len(lengths) or 1.0
    total = max(visible, len(texts))
    idf = []
    for index in range(len(terms)):
        holding = sum(1 for row in counts if row[index])
        idf.append(math.log((total - holding + 0.5) / (holding + 0.5) + 1.0))
    scores = []
    for row, length in zip(counts, lengths, strict=True):
        norm = K1 * (1 - B + B * length / average)
        scores.append(sum(idf[i] * tf * (K1 + 1) / (tf + norm) for i, tf in enumerate(row) if tf))
    return scores
