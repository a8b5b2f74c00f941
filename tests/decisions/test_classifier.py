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
        # A request in the first person asks too; "i need to go" does not.
        ("bot, i need help with my farm", (True, "named")),
        ("mineclaw i have a question", (True, "named")),
        ("bot i need to go", (False, "said_to_it")),
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
        ("u there?", (False, "not_a_question")),
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
        ("小爪 how do i make a map", (True, "named")),
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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A condition or a mob acting on it makes "you" and "your" anyone.
        ("do you lose your armor if you die in lava", (True, "question")),
        ("how does a wither skeleton find you", (True, "question")),
        ("how do you know if a chunk is a slime chunk", (True, "question")),
        ("can u trade with wandering traders", (True, "question")),
        ("can you trade with me", (False, "to_a_person")),
        ("if you fall in lava do you lose your stuff?", (True, "question")),
        # "all" and "people" address the players only as a vocative.
        ("does all the xp drop when you die", (True, "question")),
        ("can i sleep if other people are still mining", (True, "question")),
        ("night all", (False, "not_a_question")),
        ("ok so who wants to raid", (False, "to_players")),
        # Fillers before the question word, and question words as players type them.
        ("pls how to get rid of phantoms", (True, "question")),
        ("wats the best food", (True, "question")),
        ("umm where do pandas spawn", (True, "question")),
        # A request for knowledge put to nobody asks too; one to a person does not.
        ("explain redstone repeaters pls", (True, "question")),
        ("tell me how to make a beacon pyramid", (True, "question")),
        ("tell me when you're ready", (False, "to_a_person")),
        ("how was the raid", (False, "happened")),
        ("what?? no way", (False, "not_a_question")),
        # "who" asks the players, unless it asks who someone is.
        ("who stole my bed", (False, "to_players")),
        ("who invented redstone", (True, "question")),
        # A "?" without a question word leans on the conversation.
        ("stone or wood?", (False, "not_a_question")),
        ("want some of mine?", (False, "not_a_question")),
        ("villagers need beds to breed?", (True, "question")),
        ("best food for horses?", (True, "question")),
        ("lag is crazy today?", (False, "not_a_question")),
        ("if i die will i lose my xp", (True, "question")),
        ("if you are online come to spawn", (False, "not_a_question")),
        # What happened, and "it" said before, are for the players who were there.
        ("did it explode?", (False, "happened")),
        ("where is it", (False, "happened")),
        ("whats going on", (False, "to_players")),
    ],
)
def test_english_classes_of_line(text: str, expected: tuple[bool, Reason]) -> None:
    assert decide(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # 谁 asks which of the players; 咱们, 大佬, a price are said to players too.
        ("谁去挖矿", (False, "to_players")),
        ("咱们去哪", (False, "to_players")),
        ("这是谁的房子", (False, "to_players")),
        ("末影龙是谁", (True, "question")),
        ("有大佬知道怎么做刷铁机吗", (False, "to_players")),
        ("附魔书多少钱", (False, "to_players")),
        # Complaints and question words that ask nothing.
        ("服务器怎么又卡了", (False, "not_a_question")),
        ("什么鬼啊", (False, "not_a_question")),
        ("今天没怎么挖矿", (False, "not_a_question")),
        # 你 in a general how-question is anyone; a person otherwise.
        ("你要怎么才能找到远古城市", (True, "question")),
        ("如果你掉进虚空东西还在吗", (True, "question")),
        ("你怎么有这么多金子", (False, "to_a_person")),
        ("你能在水下放火把吗", (True, "question")),
        ("你能来主城吗", (False, "to_a_person")),
        # "It" said before, and what happened: for the players who saw it.
        ("它刚才说什么了", (False, "happened")),
        ("刚才挖到什么了", (False, "happened")),
        ("在哪找到的", (False, "happened")),
        ("信标是用什么做的", (True, "question")),
        # A choice, and 几 with a measure word, ask without a question word.
        ("剑还是斧头好", (True, "question")),
        ("刷怪笼要几格高", (True, "question")),
        # A particle does not make a reaction long enough.
        ("苦力怕吗", (False, "reaction")),
        # 一起 proposes only with a verb of doing together; not knowing tells, it does not ask.
        ("精准采集和时运能一起附魔吗", (True, "question")),
        # How long, how big: 多久, 多大.
        ("海龟蛋多久孵化", (True, "question")),
        ("下界传送门最小多大", (True, "question")),
        ("小爪 我想要个建筑灵感", (True, "named")),
        ("要不要一起去打凋零", (False, "to_players")),
        ("不知道为什么", (False, "not_a_question")),
        ("我也不知道怎么弄", (False, "not_a_question")),
        ("真的假的？", (False, "not_a_question")),
    ],
)
def test_chinese_classes_of_line(text: str, expected: tuple[bool, Reason]) -> None:
    assert decide(text) == expected


def test_a_reaction_or_a_conclusion_is_no_follow_up() -> None:
    answered = Recent(answered_at=90.0)
    assert decide("really?", recent=answered) == (False, "not_a_question")
    assert decide("是吗", recent=answered) == (False, "reaction")
    assert decide("那就这样", recent=answered) == (False, "not_a_question")
    # 呢 is Chinese's "what about ...?": short, still a follow-up.
    assert decide("下界的呢？", recent=answered) == (True, "follow_up")
    assert decide("and beds?", recent=answered) == (True, "follow_up")
    # "why?" asks the answer to go on.
    assert decide("why?", recent=answered) == (True, "follow_up")
    assert decide("为什么？", recent=answered) == (True, "follow_up")


def test_a_player_named_like_a_mob_or_by_a_short_name() -> None:
    online = ("Steve", "Blaze", "Sunny_D", "DiamondDan")

    def said(text: str) -> tuple[bool, Reason]:
        found = CLASSIFIER.classify(text, speaker="Steve", online=online, now=100.0)
        return found.start, found.reason

    assert said("how do i kill a blaze") == (True, "question")
    assert said("blaze where are you") == (False, "other_player")
    assert said("sunny can i borrow a pick?") == (False, "other_player")
    assert said("diamond, you there?") == (False, "other_player")
    # A short name only as said to someone: "diamond pickaxe" is a pickaxe.
    assert said("diamond pickaxe, what enchants are best?") == (True, "question")
