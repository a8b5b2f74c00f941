"""The learned listen model's data and its reading: small, in the package, the names it was not
trained on read like the ones it was, the same score every time, and a file that is not its
data refused with the file named (the rules then decide)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bridge.decisions.classifier import Classifier, ClassifierSettings, Recent
from bridge.decisions.learned import (
    ASSISTANT_MARK,
    BUCKETS,
    FORMAT,
    PLAYER_MARK,
    WEIGHTS_PATH,
    LearnedModel,
    WeightsError,
    context,
    normalised,
)

ONLINE = ("Steve", "Alex", "xX_Miner_Xx")


def test_the_shipped_model_is_small_and_loads() -> None:
    assert WEIGHTS_PATH.stat().st_size < 300_000
    model = LearnedModel.load()
    assert len(model.weights) == BUCKETS and 0 < model.threshold < 1


def test_any_assistant_name_and_any_player_name_read_the_same() -> None:
    tuning = normalised("Hey BOT, can Alex fly?", ("Mineclaw", "bot"), "Steve", ONLINE)
    other = normalised("hey  claw, can xX_Miner_Xx fly?", ("Mineclaw", "claw"), "Steve", ONLINE)
    assert tuning == other == f"hey {ASSISTANT_MARK}, can {PLAYER_MARK} fly?"
    # The speaker's own name and words that merely contain a name are left alone.
    assert normalised("steve robotics", ("bot",), "Steve", ONLINE) == "steve robotics"
    assert normalised("小爪帮我算一下", ("小爪",), "Steve", ONLINE) == f"{ASSISTANT_MARK}帮我算一下"


def test_the_score_is_the_same_every_time_and_uses_the_rules_context() -> None:
    model = LearnedModel.load()
    classifier = Classifier(ClassifierSettings(names=("bot",), reply_window_s=30))
    rules = classifier.classify("and with kelp?", speaker="Steve", online=ONLINE, now=100.0)
    cold = context(rules, Recent(), 100.0, 30)
    warm = context(rules, Recent(answered_at=95.0), 100.0, 30)
    assert not cold.follow_up and warm.follow_up
    line = normalised("and with kelp?", ("bot",), "Steve", ONLINE)
    assert model.probability(line, cold) == model.probability(line, cold)
    assert model.probability(line, cold) != model.probability(line, warm)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("not json", "model.json: "),
        ('{"format": "other/1"}', "format 'mineclaw-listen-model/1' expected"),
        (json.dumps({"format": FORMAT, "threshold": 0.5, "weights": [0.0] * 3}), "weights and"),
        (
            json.dumps({"format": FORMAT, "threshold": 0.5, "weights": [True] * BUCKETS}),
            "weights and",
        ),
        (json.dumps({"format": FORMAT, "threshold": "high", "weights": [0] * BUCKETS}), "weights"),
        ("[]", "format"),
    ],
)
def test_a_file_that_is_not_the_model_is_refused_naming_it(
    tmp_path: Path, content: str, says: str
) -> None:
    path = tmp_path / "model.json"
    path.write_text(content)
    with pytest.raises(WeightsError, match=r"^model\.json: ") as raised:
        LearnedModel.load(path)
    assert says in str(raised.value)
    with pytest.raises(WeightsError, match="model.json"):
        LearnedModel.load(tmp_path / "missing" / "model.json")
