"""The listen bench's corpus is what it claims (50 players, 30 minutes, labelled, the same on
every run) and its replay runs through the application; no figure is asserted (that is the
benchmark's to print)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bench import listen_bench
from bench.listen_corpus import MINUTES, PLAYERS, corpus


def test_the_corpus_is_fixed_and_holds_the_mix_it_claims() -> None:
    lines = corpus()
    assert lines == corpus()  # a fixed seed: the same half hour every run
    assert len({line.player for line in lines}) == PLAYERS == 50
    assert 0 < lines[0].at and lines[-1].at < MINUTES * 60
    kinds = Counter(line.kind for line in lines)
    assert set(kinds) == {"banter", "to_players", "for_assistant", "follow_up", "thanks"}
    labelled = [line for line in lines if line.for_assistant]
    assert {line.kind for line in labelled} == {"for_assistant", "follow_up"}
    assert 0.05 < len(labelled) / len(lines) < 0.2
    assert any("\u4e00" <= char <= "\u9fff" for line in lines for char in line.text)


async def test_the_replay_decides_through_the_application(tmp_path: Path) -> None:
    lines = corpus()[:120]
    every = await listen_bench.replay(tmp_path, "every line", lines)
    assert every.turns == len(lines) and every.decision_requests == 0
    model = await listen_bench.replay(tmp_path, "model", lines)
    assert model.decision_requests == len(lines)
    assert 0 < model.turns < len(lines) and 0 < model.tokens < every.tokens
    classifier = await listen_bench.replay(tmp_path, "classifier", lines)
    assert classifier.decision_requests == 0 and 0 < classifier.turns < len(lines)
