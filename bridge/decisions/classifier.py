"""The embedded classifier: a deterministic yes or no for one listen-mode line, no model.

It says yes when the line

- **asks something of the assistant by name** (``identity.name`` or one of ``listen.aliases``,
  as a whole word in Latin script, anywhere in Chinese text): the name is said to it (at the
  start, after a greeting, at the end, or ``@name``) and the rest is a question or a request
  (``bot how do I ...``, ``claw explain ...``, ``小爪，帮我 ...``). Thanks, greetings and reactions
  said to it (``thanks bot``, ``gg claw``) and talk about it (``lol the bot was wrong again``,
  ``bot said 19``, ``谢谢小爪``, ``我刚才问小爪``) are overheard;
- is a **follow-up** of a player the assistant answered within ``listen.reply_window_ms``: a
  question or a line starting like a continuation (``and``, ``what about``, 还有, 另外, or a
  Chinese line ending in 呢); ``you`` then means the assistant. Kept per player, so another
  player's answer in between loses nobody's follow-up;
- is a **question directed at nobody else**: it asks something (an English question word at
  the start of the line or of a clause, after fillers like ``pls``, typed as players type them,
  ``hw``, ``wats``; a Chinese question word or particle, 几 with a measure word, ``A还是B好``),
  names no other online player (in full, or cut short at the start: ``mossy u there?``; not
  a mob after an article: ``kill a blaze``), addresses no group of players (``anyone``,
  ``guys``, ``who took ...``, ``what's going on``, 大家, 有人, 谁..., 大佬, 咱们, a price), says no
  ``you`` to a person, asks nothing about what just happened (``did it work``, ``where is
  it``, ``钓到什么了``, ``它说什么了``, ``在哪死的``), and is more than a one-word reaction
  (``what?``, ``真的吗``: a final particle is not counted). A ``?`` with no question word
  (``sword or axe?``, ``5 dia?``) leans on the conversation, as do complaints shaped like
  questions (``怎么又卡了``, ``什么鬼``) and question words that ask nothing (``没怎么卡``). A
  ``you`` in a general how/can/does question (``how do you make a smoker``, ``can you sleep in
  the nether``, ``do you lose your xp if you die``, ``how does the warden detect you``;
  ``你要怎么才能…``, ``如果你…``) is anyone, not a person, unless the line answers another
  player (one who named the speaker within the reply window) or reads as personal (``are
  you``, ``did you``, ``can you give me``, ``do you have``, ``you there``, 你在哪).

A follow-up needs more than one word of surprise (``really?``, ``是吗``) unless it continues
(``and beds?``, ``下界的呢？``: 呢 is Chinese's "what about"); ``那就…`` concludes, it does not ask.

A line addressed to the players as a group stays theirs even from a player in their reply
window. Everything else is banter and stays overheard. English and Simplified Chinese (the
locales the bridge ships) are told apart per line, by the script it is written in; the words
each language is read by are in `en_words` and `zh_words`. Pure: the
caller passes the time, the players online and what it remembers of the speaker (`Recent`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from bridge.decisions import en_words, zh_words

Reason = Literal[
    "named",
    "question",
    "follow_up",
    "other_player",
    "to_players",
    "to_a_person",
    "reaction",
    "not_a_question",
    "said_to_it",
    "about_it",
    "happened",
]
"""Why the classifier decided as it did; `REASON_TEXT` says it in words."""

REASON_TEXT: dict[Reason, str] = {
    "named": "it asks the assistant something by name",
    "question": "a question directed at no other player",
    "follow_up": "a follow-up to the assistant's answer to this player",
    "other_player": "it names another player online",
    "to_players": "it addresses the other players",
    "to_a_person": "a question to a person, not the assistant",
    "reaction": "a short reaction, not a question",
    "not_a_question": "not a question and not addressed to the assistant",
    "said_to_it": "thanks, a greeting or a reaction to the assistant, asking nothing",
    "about_it": "it talks about the assistant, not to it",
    "happened": "it asks about what was just said or done, for the players who saw it",
}

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[a-z0-9_']+")
# Trailing decoration after a question mark: "really??", "how?!", "what? :)".
_TRAILING = re.compile(r"[\s!.~)(:;>\-<3xdp]*$")
# What may stand between the start of a line and a name said to the assistant, or after it.
_EDGE = re.compile(r"^[\s@,，、.。:：;；!！~\-—*()（）]+|[\s,，、.。:：;；!！?？~\-—*()（）]+$")

_SET_OFF = (",", ":", "，", "：")

# A question shorter than this is a reaction to someone ("what?", "why", "真的吗").
_MIN_EN_WORDS = 3
_MIN_ZH_CHARS = 4


@dataclass(frozen=True, slots=True)
class Recent:
    """What is remembered of the speaker (monotonic seconds): when the assistant last answered
    them, and when another player last spoke to them by name."""

    answered_at: float | None = None
    addressed_at: float | None = None


NOTHING_RECENT = Recent()


@dataclass(frozen=True, slots=True)
class ClassifierSettings:
    """``names``: the assistant's name and aliases; ``reply_window_s``: how long a follow-up
    counts (and how long a player another player spoke to is answering them)."""

    names: tuple[str, ...]
    reply_window_s: float


@dataclass(frozen=True, slots=True)
class Classification:
    start: bool
    reason: Reason

    @property
    def text(self) -> str:
        return REASON_TEXT[self.reason]


def _name_pattern(words: Sequence[str]) -> re.Pattern[str] | None:
    """Matches any of ``words`` not glued to other Latin letters or digits (CJK around a name
    is a boundary: Chinese has no spaces)."""
    kept = sorted({w.strip().lower() for w in words if w.strip()}, key=len, reverse=True)
    if not kept:
        return None
    alternatives = "|".join(re.escape(w) for w in kept)
    return re.compile(rf"(?<![a-z0-9_])(@?)(?:{alternatives})(?![a-z0-9_])")


class Classifier:
    """Built per configuration (the names) and asked per line; holds no state between lines."""

    def __init__(self, settings: ClassifierSettings) -> None:
        self.settings = settings
        self._names = _name_pattern(settings.names)

    def classify(
        self,
        text: str,
        *,
        speaker: str,
        online: Collection[str],
        recent: Recent = NOTHING_RECENT,
        now: float,
    ) -> Classification:
        """``online``: names of the players online (the speaker among them or not);
        ``recent``: what is remembered of the speaker."""
        line = " ".join(text.lower().split())
        zh = _CJK.search(line) is not None
        window = self.settings.reply_window_s
        if self._names is not None and (found := list(self._names.finditer(line))):
            return _named(line, found, zh)
        if _names_other_player(line, speaker, online):
            return Classification(False, "other_player")
        if _zh_addresses_group(line) if zh else _addresses_group(line):
            return Classification(False, "to_players")
        question = _is_zh_question(line) if zh else _is_en_question(line)
        if _within(recent.answered_at, now, window) and _follows_up(line, zh, question):
            return Classification(True, "follow_up")
        if not question:
            return Classification(False, "not_a_question")
        if _too_short(line, zh):
            return Classification(False, "reaction")
        if zh:
            if _zh_asks_what_happened(line):
                return Classification(False, "happened")
            if _zh_to_a_person(line):
                return Classification(False, "to_a_person")
        elif _says_you(line) and (_within(recent.addressed_at, now, window) or _personal_you(line)):
            return Classification(False, "to_a_person")
        elif _asks_what_happened(line):
            return Classification(False, "happened")
        return Classification(True, "question")


def _follows_up(line: str, zh: bool, question: bool) -> bool:
    """From a player just answered: a question, or a line that continues; not one word of
    surprise."""
    # An English line ending in "?" with no question word ("sword or axe?", "5 dia?") leans
    # on the conversation: a follow-up of the assistant's answer, else the players'.
    asked = question or (not zh and _TRAILING.sub("", line).endswith(("?", "？")))
    # 呢 at the end is Chinese's "what about ...?" ("2x2的呢？"), as "and ..." is English's.
    continues = line.startswith(zh_words.CONTINUE if zh else en_words.CONTINUE) or (
        zh and _EDGE.sub("", _TRAILING.sub("", line)).endswith("呢")
    )
    return continues or (asked and not _bare_reaction(line, zh))


def _within(at: float | None, now: float, window: float) -> bool:
    return at is not None and 0 <= now - at <= window


def _named(line: str, found: list[re.Match[str]], zh: bool) -> Classification:
    """A line that names the assistant: a turn only when the name is said to it and the line
    asks or requests something; otherwise thanks and reactions to it, or talk about it."""
    said_to = False
    for match in found:
        before, after = line[: match.start()], line[match.end() :]
        if match.group(1) == "@":
            said_to = True
        elif zh or _CJK.search(after[:1] + before[-1:]):
            said_to = said_to or _said_to_zh(before, after)
        else:
            said_to = said_to or _said_to_en(before, after)
    if not said_to:
        return Classification(False, "about_it")
    rest = "".join(_without_names(line, found))
    if _asks(rest):
        return Classification(True, "named")
    return Classification(False, "said_to_it")


def _without_names(line: str, found: list[re.Match[str]]) -> list[str]:
    parts, at = [], 0
    for match in found:
        parts.append(line[at : match.start()])
        parts.append(" ")
        at = match.end()
    parts.append(line[at:])
    return parts


def _said_to_en(before: str, after: str) -> bool:
    """``bot how ...``, ``hey bot ...``, ``how do i ..., bot?``: said to it; ``the bot``,
    ``bot said ...``, ``ask bot ...``: about it."""
    words_before, words_after = _words(before), _words(after)
    if words_before and words_before[-1] in en_words.ABOUT_BEFORE:
        return False
    if words_after:
        first = words_after[0]
        if first in en_words.ABOUT_AFTER and not (
            first == "is" and len(words_after) > 1 and words_after[1] in en_words.QUESTION_AFTER_IS
        ):
            return False
    if after.lstrip().startswith(("'s", ">", "<")):
        return False
    at_start = all(word in en_words.LEAD for word in words_before)
    at_end = not _EDGE.sub("", after) or not words_after
    # Set off by commas or a colon, a name is said to someone: "hello again, bot: ...".
    set_off = before.rstrip().endswith((",", "，")) or after.lstrip().startswith(_SET_OFF)
    return at_start or at_end or set_off


def _said_to_zh(before: str, after: str) -> bool:
    lead = _EDGE.sub("", before)
    for word in zh_words.LEAD:
        lead = lead.removeprefix(word)
    lead = _EDGE.sub("", lead)
    tail = _EDGE.sub("", after)
    if lead and tail:
        return False  # in the middle of a sentence: talked about
    if not lead and after.lstrip().startswith(zh_words.ABOUT_AFTER):
        return False  # "小爪说…", "机器人又答错了"
    return True


def _asks(rest: str) -> bool:
    """Whether what is said to the assistant, its name taken out, asks or requests something."""
    if _TRAILING.sub("", rest).endswith(("?", "？")):
        return True
    rest = _EDGE.sub("", rest)
    if not rest:
        return False
    if _CJK.search(rest):  # by the script of what is asked: "小爪 how do i make a map"
        for word in zh_words.LEAD:
            rest = rest.removeprefix(word)
        rest = _EDGE.sub("", rest)
        return bool(rest) and (_is_zh_question(rest) or any(w in rest for w in zh_words.REQUESTS))
    words = [word for word in _words(rest) if word not in en_words.LEAD]
    if not words:
        return False
    if words[0] in en_words.QUESTION_START and len(words) >= 2:
        return True
    if words[0] in ("i", "id", "i'd") and len(words) > 2 and words[1] in en_words.I_REQUEST:
        if words[2] == "to":  # "i want to know ...", not "i need to go"
            return len(words) > 3 and words[3] in en_words.TO_LEARN
        return words[1] != "have" or words[2] in ("a", "one")  # "i have a question"
    return words[0] in en_words.REQUESTS or (words[0] in ("can", "could", "would", "will"))


def _words(line: str) -> list[str]:
    return _LATIN_WORD.findall(line)


def _unled(words: list[str]) -> list[str]:
    """The words after leading greetings and fillers ("please how to ...", "ok who ...")."""
    at = 0
    while at < len(words) - 1 and words[at] in en_words.LEAD:
        at += 1
    return words[at:]


def _is_en_question(line: str) -> bool:
    """A question word or auxiliary starts the line or one of its clauses (``ok but i have no
    rods, where i can get them?``); a line ending in ``?`` without one is not enough."""
    starts = [_unled(_words(clause)) for clause in re.split(r"[,;.!?:，。]+", line)]
    asks = any(_en_asks(words, 1) for words in starts)
    words = _unled(_words(line))
    if _TRAILING.sub("", line).endswith(("?", "？")):
        # "best food for horses?", "villagers need beds to breed?" ask about the game; "milk?",
        # "5 dia?", "want some of mine?", "lag is crazy today?", a poll ("sword or axe for
        # pvp?") lean on the conversation.
        return asks or (
            len(words) >= 3
            and words[0] not in en_words.SPEAKING_OF_US
            and "or" not in words
            and not en_words.KNOWLEDGE_CUES.isdisjoint(words)
        )
    # Without "?", the first clause that says something must ask ("what?? no way" does not).
    first = next((w for w in starts if w and not (len(w) == 1 and w[0] in en_words.LEAD)), [])
    return len(words) >= _MIN_EN_WORDS and _en_asks(first, 2)


def _en_asks(words: list[str], least: int) -> bool:
    """A question word first, or a request for knowledge put to nobody: "explain redstone
    repeaters pls", "tell me how to make a beacon pyramid"."""
    if len(words) < least or not words:
        return False
    if words[0] in en_words.QUESTION_START:
        return True
    if words[0] in en_words.CONDITION:  # "if you fall in lava do you lose your stuff?"
        return any(  # an auxiliary before its subject: "... do you ..."
            word in en_words.QUESTION_START and after in en_words.SUBJECTS
            for word, after in zip(words[2:], words[3:], strict=False)
        )
    return len(words) >= _MIN_EN_WORDS and (
        words[0] in en_words.ASK_VERBS or (words[:2] == ["tell", "me"] and words[2] in en_words.WH)
    )


def _is_zh_question(line: str) -> bool:
    if any(word in line for word in zh_words.RHETORICAL):
        return False  # "怎么又卡了", "什么鬼": complaints
    bare = _TRAILING.sub("", line)
    if bare.endswith(("?", "？")) or (
        bare.endswith(zh_words.QUESTION_ENDS) and not bare.endswith(zh_words.NOT_PARTICLE_ME)
    ):
        return True
    if any(word in line for word in zh_words.NOT_KNOWING):
        return False
    for word in zh_words.NOT_ASKING:
        line = line.replace(word, " ")
    return (
        any(word in line for word in zh_words.QUESTION_WORDS)
        or bool(zh_words.CHOICE.match(bare))
        or bool(zh_words.HOW_MANY.search(line))
    )


def _bare_reaction(line: str, zh: bool) -> bool:
    """One word of surprise even from a player just answered: "really?", "真的？", "是吗"; but
    "why?", "how?", "为什么？" ask the answer to go on."""
    core = _EDGE.sub("", _TRAILING.sub("", line))
    if core in _GO_ON:
        return False
    core = core.rstrip(zh_words.PARTICLES)
    if zh:
        return len(_CJK.findall(core)) + len(_words(core)) < _MIN_ZH_CHARS - 1
    return len(_words(line)) < _MIN_EN_WORDS - 1


_GO_ON = frozenset("why how 为什么 为啥 怎么 咋 怎么说".split())


def _asks_what_happened(line: str) -> bool:
    """ "did it work?", "did u sleep", "did the update work": a past event is someone's, asked
    of the players who were there (not "did mojang remove ..."); "where is it": about what
    was said before."""
    words = _unled(_words(line))
    if len(words) > 1 and words[0] in ("did", "didnt") and words[1] not in ("mojang", "they"):
        return True
    if len(words) > 1 and words[0] in ("how", "hows") and words[1] in ("was", "were"):
        return True  # "how was the raid"
    # "where is it", "what was that": nothing but a pronoun to ask about, said before.
    return all(word in en_words.QUESTION_START or word in en_words.DEICTIC for word in words)


def _too_short(line: str, zh: bool) -> bool:
    if zh:
        core = _EDGE.sub("", _TRAILING.sub("", line)).rstrip(zh_words.PARTICLES)
        return len(_CJK.findall(core)) + len(_words(core)) < _MIN_ZH_CHARS
    return len(_words(line)) < _MIN_EN_WORDS


def _zh_addresses_group(line: str) -> bool:
    if any(word in line for word in zh_words.GROUP):
        return True
    # "末影龙是谁" asks who someone is; "这是谁的房子" asks the players.
    bare = _EDGE.sub("", _TRAILING.sub("", line)).rstrip(zh_words.PARTICLES)
    return zh_words.WHO in line and not bare.startswith("谁是") and not bare.endswith("是谁")


def _zh_asks_what_happened(line: str) -> bool:
    """About "it"/"him" said before, or what happened: ``它说什么了``, ``在哪死的``."""
    bare = _EDGE.sub("", _TRAILING.sub("", line))
    return (
        bare.startswith(zh_words.THIRD_PERSON)
        or bare.rstrip(zh_words.PARTICLES).endswith(zh_words.WHAT_HAPPENED)
        or zh_words.PAST_EVENT.search(bare) is not None
    )


def _zh_to_a_person(line: str) -> bool:
    """A 你 that is not the general one (``你要怎么拿到三叉戟`` is anyone; ``你在哪`` is a
    person)."""
    at = min((found for you in zh_words.YOU if (found := line.find(you)) >= 0), default=-1)
    if at < 0 or any(word in line for word in zh_words.CONDITION):
        return False
    after = line[at + 1 :]
    if after.startswith(zh_words.CAN) and not any(w in line for w in zh_words.TO_A_PERSON):
        return False  # "你能在水下放火把吗": can one; not "你能来主城吗", "你能帮我吗"
    return after.startswith("的") or not any(word in after for word in zh_words.GENERAL_YOU)


def _addresses_group(line: str) -> bool:
    words = _words(line)
    for index, word in enumerate(words):
        before = words[index - 1] if index else ""
        after = words[index + 1] if index + 1 < len(words) else ""
        if word in en_words.GROUP:
            return True
        if word in en_words.GROUP_NOUNS and before not in en_words.DETERMINERS:
            return True
        if word == "all" and (
            before in en_words.YOU or before in en_words.LEAD or after in ("of", "you")
        ):
            return True
    unled = _unled(words)
    if len(unled) > 1 and unled[0] in en_words.WHO and unled[1] not in en_words.WHO_KNOWLEDGE:
        return True  # "who took my diamonds", "ok who wants to raid"
    return any(phrase in line for phrase in en_words.GROUP_PHRASES)


def _says_you(line: str) -> bool:
    return any(word in en_words.YOU for word in _words(line))


def _personal_you(line: str) -> bool:
    """Whether a question's ``you`` is a person rather than anyone: it is anyone in a general
    how/can/does question (``how do you make a smoker``, ``can you sleep in the nether``) unless
    the words around it say a person (``are you``, ``did you``, ``can you give me``, ``you
    there``, ``your``)."""
    words = _unled(_words(line))
    # "if you fall in the void", "when you die": anyone, "your items" too.
    condition = any(
        word in en_words.CONDITION and after in en_words.YOU
        for word, after in zip(words, words[1:], strict=False)
    )
    if not words or (words[0] not in en_words.GENERAL_START and words[0] not in en_words.CONDITION):
        return True  # "u coming?", "you there?": said to someone
    for index, word in enumerate(words):
        if word in en_words.PERSONAL_FORMS and not condition:
            return True
        if word not in ("you", "u", "ya"):
            continue
        before = words[index - 1] if index else ""
        after = words[index + 1] if index + 1 < len(words) else ""
        if not after and before in en_words.ACTS_ON:
            continue  # "how does the warden detect you"
        then = words[index + 2 : index + 4]
        if after == "know" and then[:1] and then[0] in ("if", "whether", "when", "which"):
            continue  # "how do you know if a chunk is a slime chunk"
        if before in en_words.PERSONAL_BEFORE or after in en_words.PERSONAL_AFTER or not after:
            return True
        if after in en_words.ASKED_OF_A_PERSON and not (
            then[:1] == ["with"] and then[1:] and then[1] not in en_words.FOR_ME
        ):  # "can you trade with me", not "can u trade with wandering traders"
            return True
        if after in en_words.FAVOURS and any(w in en_words.FOR_ME for w in words[index + 2 :]):
            return True  # "can you give me some food", "could you help us"
    return False


def players_named(line: str, speaker: str, online: Collection[str]) -> list[str]:
    """The online players other than the speaker whom a line names (as whole words)."""
    said = _words(line.lower())
    if not said:
        return []
    words = set(said)
    if not words.isdisjoint(en_words.ARTICLES):
        # "how do i kill a blaze" names a mob, not the player Blaze.
        words = {w for i, w in enumerate(said) if not (i and said[i - 1] in en_words.ARTICLES)}
    # A line may open with a player's name cut short, said to them: "mossy u still at shop?"
    # to mossyboots, "sunny sell me one?" to Sunny_D (not "diamond pickaxe?" to DiamondDan).
    first = None
    if len(said) > 1 and len(said[0]) >= 4 and said[0] not in en_words.COMMON_FIRST:
        set_off = line.lstrip(" @").lower().removeprefix(said[0]).startswith((",", ":"))
        first = said[0] if set_off or said[1] in en_words.SAID_AFTER_A_NAME else None
    own = speaker.lower()
    if first is None:
        return [
            name
            for name in online
            if (lowered := name.lower()) in words and lowered != own and len(lowered) >= 3
        ]
    return [
        name
        for name in online
        if ((lowered := name.lower()) in words or lowered.startswith(first))
        and lowered != own
        and len(lowered) >= 3
    ]


def _names_other_player(line: str, speaker: str, online: Collection[str]) -> bool:
    """A mention of another online player by name, or ``@someone`` who is not the assistant
    (the assistant's own names were checked first)."""
    if re.search(r"(?<![a-z0-9_])@[a-z0-9_]{3,16}", line):
        return True
    return bool(players_named(line, speaker, online))
