"""The embedded classifier: asked by name, a question for nobody else, a follow-up; in English
and Simplified Chinese; and the lines it must leave alone (thanks to it, talk about it, "you" to
a person, a group call from a player in their reply window)."""

from __future__ import annotations

import json
from typing import get_args

import pytest

from bridge.decisions.classifier import (
    REASON_TEXT,
    Classifier,
    ClassifierSettings,
    Reason,
    Recent,
)
from bridge.decisions.memory import ReplyMemory
from bridge.decisions.prompt import HeardLine, decision_document

ONLINE = ("Steve", "Alex", "Notch", "xX_Miner_Xx")
CLASSIFIER = Classifier(ClassifierSettings(names=("Mineclaw", "bot", "小爪"), reply_window_s=30))


NOTHING_RECENT = Recent()


def decide(
    text: str, *, speaker: str = "Steve", recent: Recent = NOTHING_RECENT, now: float = 100.0
) -> tuple[bool, Reason]:
    found = CLASSIFIER.classify(text, speaker=speaker, online=ONLINE, recent=recent, now=now)
    return found.start, found.reason


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Asked by name or alias, any case, with @, at the start, after a greeting, at the end.
        ("Mineclaw, how do I make a beacon?", (True, "named")),
        ("hey mineclaw what's the time", (True, "named")),
        ("@Mineclaw help", (True, "named")),
        ("BOT what light level do crops need", (True, "named")),
        ("how do i make a banner with a creeper face, bot?", (True, "named")),
        ("bot tell me a joke", (True, "named")),
        ("bot is there a way to keep inventory", (True, "named")),
        ("Mineclaw, I am back: what did I miss?", (True, "named")),
        ("hello again, Mineclaw: what did I miss?", (True, "named")),
        ("hello again, Mineclaw", (False, "said_to_it")),
        # Said to it but asking nothing: thanks, greetings, reactions.
        ("thanks bot", (False, "said_to_it")),
        ("gg mineclaw", (False, "said_to_it")),
        ("lol bot", (False, "said_to_it")),
        # Talk about it: the third person, a name inside the sentence.
        ("is the BOT awake?", (False, "about_it")),
        ("lol the bot was wrong again", (False, "about_it")),
        ("bot said 19 lol", (False, "about_it")),
        ("mineclaw is so slow today", (False, "about_it")),
        ("i asked mineclaw earlier", (False, "about_it")),
        ("then idk ask the bot", (False, "about_it")),
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
        # "you" in a general how/can/does question is anyone...
        ("how do you make a smoker", (True, "question")),
        ("can you sleep in the nether", (True, "question")),
        ("do you need a beacon to make a conduit", (True, "question")),
        ("what happens if you drink a potion of luck", (True, "question")),
        # ...unless the words around it make it a person.
        ("how did you get so many diamonds?", (False, "to_a_person")),
        ("what are you building?", (False, "to_a_person")),
        ("can you give me some food?", (False, "to_a_person")),
        ("do you have spare iron?", (False, "to_a_person")),
        ("where is your base", (False, "to_a_person")),
        ("Alex how do you make a smoker", (False, "other_player")),
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
        ("小爪 帮我算一下64个铁块是多少铁锭", (True, "named")),
        ("谢谢小爪", (False, "said_to_it")),
        ("小爪说得对", (False, "about_it")),
        ("我刚才问小爪 它说要交易图书管理员", (False, "about_it")),
        ("bot又答错了", (False, "about_it")),
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
    answered = Recent(answered_at=90.0)
    # "you" now means the assistant, and a continuation counts without a question mark.
    assert decide("can you say that again?", recent=answered) == (True, "follow_up")
    assert decide("and for a cake", recent=answered) == (True, "follow_up")
    assert decide("那蛋糕呢", recent=answered) == (True, "follow_up")
    # Not a question and no continuation: thanks are banter.
    assert decide("thanks!", recent=answered) == (False, "not_a_question")
    # Not answered, or past the window: no follow-up.
    assert decide("can you say that again?")[0] is False
    assert decide("can you say that again?", recent=answered, now=121.0)[0] is False
    # Naming another player is theirs even in the window.
    assert decide("Alex did you see that?", recent=answered) == (False, "other_player")


def test_a_group_call_wins_over_a_follow_up() -> None:
    answered = Recent(answered_at=95.0)
    assert decide("anyone selling mending books?", recent=answered) == (False, "to_players")
    assert decide("有人卖鞘翅吗", recent=answered) == (False, "to_players")


def test_follow_ups_are_kept_per_player_whoever_was_answered_since() -> None:
    memory = ReplyMemory()
    memory.answered("Steve", 90.0)
    memory.answered("Alex", 95.0)  # the assistant answered someone else in between
    assert decide("and for a smoker", recent=memory.recent("steve")) == (True, "follow_up")
    assert decide("and for a smoker", recent=memory.recent("Alex")) == (True, "follow_up")
    assert memory.last_answered() == ("Alex", 95.0)
    assert decide("and for a smoker", recent=memory.recent("Notch"))[0] is False


def test_memory_forgets_the_longest_unheard_player_first() -> None:
    memory = ReplyMemory(kept=2)
    memory.answered("A", 1.0)
    memory.answered("B", 2.0)
    memory.answered("A", 3.0)
    memory.answered("C", 4.0)
    assert memory.recent("B") == Recent() and memory.recent("A").answered_at == 3.0
    memory.clear()
    assert memory.last_answered() is None


def test_a_you_that_answers_another_player_is_theirs() -> None:
    # Another player named Steve a moment ago: his general-looking "you" answers them.
    spoken_to = Recent(addressed_at=92.0)
    assert decide("how do you make a smoker", recent=spoken_to) == (False, "to_a_person")
    assert decide("how do you make a smoker", recent=spoken_to, now=200.0) == (True, "question")


def test_every_reason_has_words_for_listen_why() -> None:
    assert set(REASON_TEXT) == set(get_args(Reason))
    assert all(text and text == text.strip() for text in REASON_TEXT.values())


def test_the_speaker_naming_themself_is_not_another_player() -> None:
    assert decide("Steve here, how do I tame a fox?") == (True, "question")


def test_no_names_configured_still_classifies() -> None:
    bare = Classifier(ClassifierSettings(names=(), reply_window_s=0))
    found = bare.classify("how do I tame a fox?", speaker="S", online=(), now=0)
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
