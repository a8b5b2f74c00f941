"""The listen bench's corpora are what they claim (50 players, 30 minutes, labelled, the same on
every run) and its replay runs through the application; no figure is asserted (that is the
benchmark's to print)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bench import listen_bench, listen_holdout, listen_offline, listen_testset, listen_train
from bench.listen_corpus import MINUTES, PLAYERS, corpus
from bridge.decisions.learned import WEIGHTS_PATH


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


def test_the_test_set_is_larger_than_the_issue_asks_and_labelled_in_both_languages() -> None:
    lines = listen_testset.load()
    assert lines == listen_testset.load()
    assert len(lines) >= 850 and len({line.player for line in lines}) >= 40
    labelled = [line for line in lines if line.for_assistant]
    assert 0.05 < len(labelled) / len(lines) < 0.2
    chinese = [line for line in labelled if any("\u4e00" <= c <= "\u9fff" for c in line.text)]
    assert 0 < len(chinese) < len(labelled)
    assert all(a.at < b.at for a, b in zip(lines, lines[1:], strict=False))
    # None of the tuning set's players: the test set is another server's chat.
    assert not {line.player for line in lines} & {line.player for line in corpus()}


def test_the_holdout_set_is_another_server_and_mostly_chinese() -> None:
    lines = listen_holdout.load()
    assert lines == listen_holdout.load()
    assert len(lines) >= 200
    chinese = [line for line in lines if any("\u4e00" <= c <= "\u9fff" for c in line.text)]
    assert len(chinese) * 2 >= len(lines)
    labelled = [line for line in lines if line.for_assistant]
    assert any(line in chinese for line in labelled) and not set(labelled) <= set(chinese)
    players = {line.player for line in lines}
    assert not players & (
        {line.player for line in corpus()} | {line.player for line in listen_testset.load()}
    )
    assert set(listen_holdout.ALIASES) - set(listen_testset.ALIASES)


def test_a_malformed_test_set_line_is_named_by_its_number(tmp_path: Path) -> None:
    bad = tmp_path / "set.txt"
    bad.write_text("# a comment\nAlex | AI | how do i craft a bed\nAlex says hi\n")
    with pytest.raises(listen_testset.TestSetError, match=r"set\.txt:3: 'player \| addressed"):
        listen_testset.load(bad)
    bad.write_text("== soon\n")
    with pytest.raises(listen_testset.TestSetError, match=r"set\.txt:1: '== seconds'"):
        listen_testset.load(bad)


async def test_the_test_set_replays_under_its_own_assistant_names(tmp_path: Path) -> None:
    of = listen_bench.test_set()
    lines = [line for line in of.lines if "小爪" in line.text or "claw" in line.text][:6]
    figures = await listen_bench.replay(tmp_path, "classifier", lines, of)
    assert len(figures.started) == len(lines) and figures.turns > 0
    split = listen_bench.by_language(lines, figures.started)
    assert split["en"].lines + split["zh"].lines == len(lines)


def test_the_learned_model_is_what_training_on_the_tuning_set_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_test_set(*_: object) -> None:
        raise AssertionError("training read the test set")

    monkeypatch.setattr(listen_testset, "load", no_test_set)
    monkeypatch.setattr(listen_holdout, "load", no_test_set)
    assert listen_train.model_json() == WEIGHTS_PATH.read_text(encoding="utf-8")


async def test_the_replay_without_the_application_decides_as_the_application(
    tmp_path: Path,
) -> None:
    of = listen_bench.test_set()
    lines = of.lines[:150]
    through_app = await listen_bench.replay(tmp_path, "classifier", lines, of)
    names = (of.assistant, *of.aliases)
    assert listen_offline.started(lines, names, listen_offline.rules) == through_app.started
    assert any(through_app.started)
