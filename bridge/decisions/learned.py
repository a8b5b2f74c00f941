"""A tiny learned listen model: character n-grams of the line and the classifier's own context
(its reason, whether the speaker is in their reply window or was just spoken to by another
player) scored by a logistic regression trained on the listen bench's tuning set only
(`bench/listen_train.py`; the weights are `listen_model.json` in this package, no download).

The assistant's names and the online players' names are replaced by one placeholder each
before the n-grams are taken, so what is learned is how a line is put, not who is named: a
server whose assistant has other aliases reads the same. Pure and deterministic (the n-grams
are hashed with CRC-32 into a fixed table). The rules stay the fallback (no weights, weights
that do not load) and their reason is what operators are shown.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bridge.decisions.classifier import Classification, Recent

WEIGHTS_PATH = Path(__file__).with_name("listen_model.json")
FORMAT = "mineclaw-listen-model/1"
BUCKETS = 1 << 14
N_GRAMS = (1, 2, 3, 4)
ASSISTANT_MARK = "\u2460"
"""Stands for any of the assistant's names in the line (a character no chat line uses)."""
PLAYER_MARK = "\u2461"
"""Stands for any other online player's name."""


@dataclass(frozen=True, slots=True)
class Context:
    """What the classifier knew beside the words: its verdict and the speaker's recent past."""

    rules: Classification
    follow_up: bool
    addressed: bool


def context(rules: Classification, recent: Recent, now: float, window: float) -> Context:
    def within(at: float | None) -> bool:
        return at is not None and 0 <= now - at <= window

    return Context(rules, within(recent.answered_at), within(recent.addressed_at))


def _pattern(words: Sequence[str]) -> re.Pattern[str] | None:
    kept = sorted({w.strip().lower() for w in words if len(w.strip()) >= 2}, key=len, reverse=True)
    if not kept:
        return None
    alternatives = "|".join(re.escape(w) for w in kept)
    return re.compile(rf"(?<![a-z0-9_])@?(?:{alternatives})(?![a-z0-9_])")


def normalised(text: str, names: Sequence[str], speaker: str, online: Collection[str]) -> str:
    line = " ".join(text.lower().split())
    assistant = _pattern(names)
    if assistant is not None:
        line = assistant.sub(ASSISTANT_MARK, line)
    others = _pattern([p for p in online if p.lower() != speaker.lower() and len(p) >= 3])
    if others is not None:
        line = others.sub(PLAYER_MARK, line)
    return line


def features(line: str, ctx: Context) -> Iterator[str]:
    """The feature names of a normalised line in its context (hashed by `bucket`)."""
    yield "bias"
    yield f"rules:{ctx.rules.reason}"
    yield f"rules_start:{ctx.rules.start}"
    yield f"follow_up:{ctx.follow_up}"
    yield f"addressed:{ctx.addressed}"
    yield f"follow_up&{ctx.rules.reason}:{ctx.follow_up}"
    padded = f"\u0002{line}\u0003"
    for n in N_GRAMS:
        for at in range(len(padded) - n + 1):
            yield padded[at : at + n]


def bucket(feature: str) -> int:
    return zlib.crc32(feature.encode()) % BUCKETS


class WeightsError(ValueError):
    """The model's data file is missing or not what this code reads."""


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True, slots=True)
class LearnedModel:
    weights: tuple[float, ...]
    threshold: float

    @classmethod
    def load(cls, path: Path = WEIGHTS_PATH) -> LearnedModel:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise WeightsError(f"{path.name}: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise WeightsError(f"{path.name}: format {FORMAT!r} expected")
        weights, threshold = data.get("weights"), data.get("threshold")
        if (
            not isinstance(weights, list)
            or len(weights) != BUCKETS
            or not all(_number(w) for w in weights)
            or not isinstance(threshold, int | float)
            or not _number(threshold)
        ):
            raise WeightsError(f"{path.name}: {BUCKETS} weights and a threshold expected")
        return cls(tuple(float(w) for w in weights), float(threshold))

    def probability(self, line: str, ctx: Context) -> float:
        score = sum(self.weights[bucket(f)] for f in features(line, ctx))
        return 1 / (1 + math.exp(-max(-30.0, min(30.0, score))))

    def start(self, line: str, ctx: Context) -> bool:
        return self.probability(line, ctx) >= self.threshold
