"""Listen decisions replayed without the application: the classifier and its reply memory fed a
corpus line by line, as `app.requests.listen_decisions` feeds them (every player of the corpus
online, the assistant's answer to a started line at once), for the learned model's training
(`bench.listen_train`) and its comparison with the rules (`bench.listen_bench`).

``answered``: who counts as answered after a line: the decider's own verdict (as in the
application), or the line's label (training: the memory an ideal decider would leave).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from bench.listen_corpus import Line
from bridge.decisions.classifier import (
    Classification,
    Classifier,
    ClassifierSettings,
    players_named,
)
from bridge.decisions.learned import Context, LearnedModel, context, normalised
from bridge.decisions.memory import ReplyMemory

REPLY_WINDOW_S = 30.0
"""``listen.reply_window_ms``'s default, as the bench's configuration leaves it."""


@dataclass(frozen=True, slots=True)
class Seen:
    line: Line
    normalised: str
    context: Context


Decider = Callable[[Seen], bool]


def rules(seen: Seen) -> bool:
    return seen.context.rules.start


def learned(model: LearnedModel) -> Decider:
    return lambda seen: model.start(seen.normalised, seen.context)


def walk(
    lines: list[Line],
    names: tuple[str, ...],
    decide: Decider,
    answered: Literal["decided", "labelled"] = "decided",
) -> Iterator[tuple[Seen, bool]]:
    classifier = Classifier(ClassifierSettings(names=names, reply_window_s=REPLY_WINDOW_S))
    memory = ReplyMemory()
    online = sorted({line.player for line in lines})
    for line in lines:
        recent = memory.recent(line.player)
        found: Classification = classifier.classify(
            line.text, speaker=line.player, online=online, recent=recent, now=line.at
        )
        seen = Seen(
            line,
            normalised(line.text, names, line.player, online),
            context(found, recent, line.at, REPLY_WINDOW_S),
        )
        start = decide(seen)
        yield seen, start
        memory.addressed(players_named(line.text, line.player, online), line.at)
        if start if answered == "decided" else line.for_assistant:
            memory.answered(line.player, line.at)


def started(lines: list[Line], names: tuple[str, ...], decide: Decider) -> tuple[bool, ...]:
    return tuple(start for _, start in walk(lines, names, decide))


def per_line_us(lines: list[Line], names: tuple[str, ...], decide: Decider) -> float:
    """Microseconds per line of the whole decision (rules, normalising, the decider)."""
    began = time.perf_counter()
    for _ in walk(lines, names, decide):
        pass
    return (time.perf_counter() - began) * 1e6 / max(len(lines), 1)
