"""Trains the learned listen model (`bridge.decisions.learned`) on the listen bench's tuning set
(`bench.listen_corpus`) only and writes `bridge/decisions/listen_model.json`. The test set
(`bench/listen_testset.txt`) is never read here.

Logistic regression by stochastic gradient descent in plain Python: a fixed seed for the order
of the lines, a fixed number of epochs, L2 regularisation; the same corpus gives the same
weights, byte for byte. The reply memory while training is the labels' (who an ideal decider
would have answered). The threshold is the one with the best F1 on the tuning set's lines
scored by a model trained without them (five contiguous folds), so it is not picked on lines
the weights saw.

Run: ``python -m bench.listen_train [--check]`` (``--check``: exit 1 when the file in the
package differs from what training gives now).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys

from bench.listen_corpus import ALIASES, ASSISTANT, corpus
from bench.listen_offline import Seen, rules, walk
from bridge.decisions.learned import BUCKETS, FORMAT, WEIGHTS_PATH, bucket, features

SEED = 45
EPOCHS = 12
RATE = 0.1
L2 = 1e-4


def examples() -> list[tuple[list[int], bool]]:
    lines = corpus()
    names = (ASSISTANT, *ALIASES)
    seen = [s for s, _ in walk(lines, names, rules, answered="labelled")]
    return [(_hashed(s), s.line.for_assistant) for s in seen]


def _hashed(seen: Seen) -> list[int]:
    return [bucket(f) for f in features(seen.normalised, seen.context)]


def train(data: list[tuple[list[int], bool]]) -> list[float]:
    weights = [0.0] * BUCKETS
    order = list(range(len(data)))
    rng = random.Random(SEED)
    for epoch in range(EPOCHS):
        rng.shuffle(order)
        rate = RATE / (1 + epoch)
        for index in order:
            hashed, label = data[index]
            score = sum(weights[b] for b in hashed)
            p = 1 / (1 + math.exp(-max(-30.0, min(30.0, score))))
            gradient = p - (1.0 if label else 0.0)
            for b in hashed:
                weights[b] -= rate * (gradient + L2 * weights[b])
    return weights


def _probability(weights: list[float], hashed: list[int]) -> float:
    score = sum(weights[b] for b in hashed)
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, score))))


def threshold(data: list[tuple[list[int], bool]], folds: int = 5) -> float:
    """The threshold with the best F1 on out-of-fold scores."""
    scored: list[tuple[float, bool]] = []
    size = math.ceil(len(data) / folds)
    for fold in range(folds):
        held = data[fold * size : (fold + 1) * size]
        weights = train(data[: fold * size] + data[(fold + 1) * size :])
        scored += [(_probability(weights, hashed), label) for hashed, label in held]
    best, best_f1 = 0.5, -1.0
    labelled = sum(label for _, label in scored)
    for step in range(5, 96):
        cut = step / 100
        turns = sum(p >= cut for p, _ in scored)
        hits = sum(p >= cut and label for p, label in scored)
        f1 = 2 * hits / (turns + labelled) if turns + labelled else 0.0
        if f1 > best_f1:
            best, best_f1 = cut, f1
    return best


def model_json() -> str:
    data = examples()
    weights = train(data)
    document = {
        "format": FORMAT,
        "trained_on": "bench/listen_corpus.py (the listen bench's tuning set) only",
        "threshold": threshold(data),
        "weights": [round(w, 4) for w in weights],
    }
    return json.dumps(document, separators=(",", ":")) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    text = model_json()
    if args.check:
        same = WEIGHTS_PATH.is_file() and WEIGHTS_PATH.read_text(encoding="utf-8") == text
        print(f"{WEIGHTS_PATH.name}: {'as trained' if same else 'DIFFERS from training'}")
        return 0 if same else 1
    WEIGHTS_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {WEIGHTS_PATH} ({len(text.encode()):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
