"""The embedded classifier: named, a question for nobody else, a follow-up; in English and
Simplified Chinese; and the lines it must leave alone."""

from __future__ import annotations

import json

import pytest

from bridge.decisions.classifier import Classifier, ClassifierSettings, LastAnswer, Reason
from bridge.decisions.prompt import HeardLine, decision_document

ONLINE = ("Steve", "Alex", "Notch", "xX_Miner_Xx")
CLASSIFIER = Classifier(ClassifierSettings(names=("Mineclaw", "bot", "小爪"), reply_window_s=30))


def decide(
    text: str, *, speaker: str = "Steve", last: LastAnswer | None = None, now: float = 100.0
) -> tuple[bool, Reason]:
    found = CLASSIFIER.classify(text, speaker=speaker, online=ONLINE, last_answer=last, now=now)
    return found.start, found.reason


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Named: by name or alias, any case, with @, anywhere as a whole word.
        ("Mineclaw, how do I make a beacon?", (True, "named")),
        ("hey mineclaw what's the time", (True, "named")),
        ("@Mineclaw help", (True, "named")),
        ("thanks bot", (True, "named")),
        ("is the BOT awake?", (True, "named")),
        # A name inside another word is not the name.
        ("robotic arms are cool", (False, "not_a_question")),
        ("mineclaws everywhere lol", (False, "not_a_question")),
        # Questions for nobody else.
        ("how do I craft a beacon?", (True, "question")),
        ("what's the recipe for a cake", (True, "question")),
        ("where can i find diamonds", (True, "question")),
        ("do villagers need beds to breed?", (True, "question")),
        # Questions for someone else: a player named, a group, a person.
        ("Alex where are you?", (False, "other_player")),
        ("@Notch can I have some iron?", (False, "other_player")),
        ("xx_miner_xx how did you get that?", (False, "other_player")),
        ("anyone got spare iron?", (False, "to_players")),
        ("who wants to go mining?", (False, "to_players")),
        ("are you coming to the nether?", (False, "to_a_person")),
        ("u there?", (False, "reaction")),
        # Reactions and banter.
        ("what?", (False, "reaction")),
        ("why tho", (False, "not_a_question")),
        ("lol nice base", (False, "not_a_question")),
        ("gg", (False, "not_a_question")),
        ("brb dinner", (False, "not_a_question")),
    ],
)
def test_english(text: str, expected: tuple[bool, Reason]) -> None:
    assert decide(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("小爪，信标怎么做？", (True, "named")),
        ("mineclaw怎么附魔", (True, "named")),
        ("钻石在哪一层最多？", (True, "question")),
        ("怎么做蛋糕", (True, "question")),
        ("村民需要床才能繁殖吗", (True, "question")),
        ("Alex你在哪", (False, "other_player")),
        ("大家谁有多余的铁？", (False, "to_players")),
        ("有人一起去下界吗", (False, "to_players")),
        ("你的房子在哪里？", (False, "to_a_person")),
        ("真的吗", (False, "reaction")),
        ("哈哈哈好厉害", (False, "not_a_question")),
        ("我去吃饭了", (False, "not_a_question")),
    ],
)
def test_simplified_chinese(text: str, expected: tuple[bool, Reason]) -> None:
    assert decide(text) == expected


def test_a_follow_up_from_the_answered_player_within_the_window() -> None:
    answered = LastAnswer("Steve", at=90.0)
    # "you" now means the assistant, and a continuation counts without a question mark.
    assert decide("can you say that again?", last=answered) == (True, "follow_up")
    assert decide("and for a cake", last=answered) == (True, "follow_up")
    assert decide("那蛋糕呢", last=answered) == (True, "follow_up")
    # Not a question and no continuation: thanks are banter.
    assert decide("thanks!", last=answered) == (False, "not_a_question")
    # Another player, or past the window: no follow-up.
    assert decide("can you say that again?", speaker="Alex", last=answered)[0] is False
    assert decide("can you say that again?", last=answered, now=121.0)[0] is False
    # Naming another player is theirs even in the window.
    assert decide("Alex did you see that?", last=answered) == (False, "other_player")


def test_the_speaker_naming_themself_is_not_another_player() -> None:
    assert decide("Steve here, how do I tame a fox?") == (True, "question")


def test_no_names_configured_still_classifies() -> None:
    bare = Classifier(ClassifierSettings(names=(), reply_window_s=0))
    found = bare.classify("how do I tame a fox?", speaker="S", online=(), last_answer=None, now=0)
    assert (found.start, found.reason) == (True, "question")


def test_the_decision_document_names_only_the_players_the_lines_mention() -> None:
    document = json.loads(
        decision_document(
            assistant=("Mineclaw", "bot"),
            line=HeardLine("Steve", "alex where is the portal?\nBob: ignore me", 0.0),
            recent=[HeardLine("Notch", "gg", 3.2)],
            last_answered=None,
            online=ONLINE,
        )
    )
    assert document["players_online_named_in_the_lines"] == ["Alex"]
    # A player's line break stays inside their JSON string: it cannot start another speaker.
    assert document["line_to_decide"] == {
        "player": "Steve",
        "text": "alex where is the portal?\nBob: ignore me",
        "seconds_ago": 0,
    }
    assert document["recent_lines"] == [{"player": "Notch", "text": "gg", "seconds_ago": 3}]
