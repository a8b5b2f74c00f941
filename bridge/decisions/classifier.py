"""The embedded classifier: a deterministic yes or no for one listen-mode line, no model.

It says yes when the line

- **asks something of the assistant by name** (``identity.name`` or one of ``listen.aliases``,
  as a whole word in Latin script, anywhere in Chinese text): the name is said to it (at the
  start, after a greeting, at the end, or ``@name``) and the rest is a question or a request
  (``bot how do I ...``, ``claw explain ...``, ``小爪，帮我 ...``). Thanks, greetings and reactions
  said to it (``thanks bot``, ``gg claw``) and talk about it (``lol the bot was wrong again``,
  ``bot said 19``, ``谢谢小爪``, ``我刚才问小爪``) are overheard;
- is a **follow-up** of a player the assistant answered within ``listen.reply_window_ms``: a
  question or a line starting like a continuation (``and``, ``what about``, 那, 还有); ``you``
  then means the assistant. Kept per player, so another player's answer in between loses
  nobody's follow-up;
- is a **question directed at nobody else**: it asks something (a question mark, an English
  question word at its start, a Chinese question word or particle), names no other online
  player, addresses no group of players (``anyone``, ``guys``, 大家, 有人, ...), says no ``you``
  to a person, and is more than a one-word reaction (``what?``, ``真的吗``). A ``you`` in a
  general how/can/does question (``how do you make a smoker``, ``can you sleep in the nether``)
  is anyone, not a person, unless the line answers another player (one who named the speaker
  within the reply window) or reads as personal (``are you``, ``did you``, ``can you give me``,
  ``do you have``, ``you there``).

A line addressed to the players as a group stays theirs even from a player in their reply
window. Everything else is banter and stays overheard. English and Simplified Chinese (the
locales the bridge ships) are told apart per line, by the script it is written in. Pure: the
caller passes the time, the players online and what it remembers of the speaker (`Recent`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

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
}

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[a-z0-9_']+")
# Trailing decoration after a question mark: "really??", "how?!", "what? :)".
_TRAILING = re.compile(r"[\s!.~)(:;>\-<3xdp]*$")
# What may stand between the start of a line and a name said to the assistant, or after it.
_EDGE = re.compile(r"^[\s@,，、.。:：;；!！~\-—*()（）]+|[\s,，、.。:：;；!！?？~\-—*()（）]+$")

_EN_QUESTION_START = frozenset(
    "how what what's whats where where's wheres when why who who's whos which whose can could "
    "does do did is are was were should would will shall may might any anyone's hows wat wut "
    "whats'".split()
)
_EN_GROUP = frozenset(
    "anyone anybody anyon any1 someone somebody everyone everybody guys yall y'all ppl people "
    "team folks all".split()
)
_EN_GROUP_PHRASES = ("who wants", "who's on", "who is on", "who has", "who's got", "who got")
_EN_YOU = frozenset("you u ya your ur you're youre yours yourself you've you'll you'd".split())
_EN_CONTINUE = ("and ", "but ", "what about", "how about", "also ", "then ", "so ", "ok and")
# "you" in a general how/can/does question is anyone ("how do you make a smoker")...
_EN_GENERAL_START = frozenset(
    "how what what's whats where when why which can could do does is should would".split()
)
# ...unless the words around it make it a person: "are you", "did you", "you there", "your".
_EN_PERSONAL_BEFORE = frozenset(
    "are r were did have has will would could wont won't".split()
)  # fmt: skip
_EN_PERSONAL_AFTER = frozenset(
    "there online here still coming going doing building making mining got have want wanna "
    "know remember think mean like guys all two at in on up busy ok alright sure free "
    "already just".split()
)
_EN_PERSONAL_FORMS = frozenset("your ur you're youre yours yourself you've you'll you'd".split())
# "can you come", "could you say that again": asking a person to do something...
_EN_ASKED_OF_A_PERSON = frozenset(
    "help give lend send bring come tp show sell trade pass throw drop say tell repeat explain "
    "wait stop move follow join invite open hold check".split()
)
# ...and "can you make me one" (but "can you make a farm for skulls" asks what is possible).
_EN_FAVOURS = frozenset("get make craft build find grab buy".split())
_EN_FOR_ME = frozenset("me us".split())

# Greetings and fillers before a name said to the assistant: "hey bot", "ok claw".
_EN_LEAD = frozenset(
    "hey hi hello yo oi ok okay so and but also then pls please plz um uh hmm dear sup hiya "
    "o oh yes yeah ey".split()
)
_ZH_LEAD = ("嘿", "喂", "哎", "诶", "请问", "那个", "你好", "hi", "hey")
# A name followed by these is talked about ("bot said ...", "bot was wrong"), not to.
_EN_ABOUT_AFTER = frozenset(
    "is isnt isn't was wasnt wasn't said says doesnt doesn't dont don't cant can't didnt didn't "
    "knows thinks just always never sucks got gave told answered keeps lies has had seems looks "
    "really actually literally too > < 's is's".split()
)
_EN_ABOUT_BEFORE = frozenset(
    "the a an this that ur your our my his her their ask asked asking tell told trust than like "
    "to at about of from with by for use using called name named it".split()
)
_SET_OFF = (",", ":", "，", "：")
_EN_QUESTION_AFTER_IS = frozenset("there it this that".split())
_ZH_ABOUT_AFTER = (
    "说", "又", "也", "都", "好", "真", "太", "比", "还", "是", "有时候", "今天", "不", "就", "的",
    "答", "回答", "乱", "刚", "居然", "竟然", "挺",
)  # fmt: skip
# What asks something of the assistant besides a question: a request.
_EN_REQUESTS = frozenset(
    "tell explain give show help make list find calculate calc translate roast rate write say "
    "describe recommend suggest teach remind check compare define summarize summarise name "
    "pick choose guess convert count build design plan draw spell read sing search look "
    "please pls plz i'd need".split()
)
_ZH_REQUESTS = (
    "帮", "告诉", "给我", "解释", "请", "说说", "讲讲", "讲个", "教", "推荐", "算", "介绍", "来个",
    "查", "讲一下", "说一下", "看看", "想知道", "问一下", "问你",
)  # fmt: skip

_ZH_QUESTION_WORDS = (
    "怎么", "怎样", "如何", "什么", "为什么", "为啥", "哪", "谁", "多少", "几个", "几点", "是不是",
    "能不能", "可不可以", "有没有", "会不会", "要不要", "咋", "啥",
)  # fmt: skip
_ZH_QUESTION_ENDS = ("吗", "呢", "么")
_ZH_GROUP = ("大家", "有人", "谁有", "谁要", "谁想", "谁来", "你们", "各位", "兄弟们", "一起")
_ZH_YOU = ("你", "您")
_ZH_CONTINUE = ("那", "还有", "那么", "然后", "另外")

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
        if any(word in line for word in _ZH_GROUP) if zh else _addresses_group(line):
            return Classification(False, "to_players")
        question = _is_zh_question(line) if zh else _is_en_question(line)
        follow_up = _within(recent.answered_at, now, window)
        if follow_up and (question or line.startswith(_ZH_CONTINUE if zh else _EN_CONTINUE)):
            return Classification(True, "follow_up")
        if not question:
            return Classification(False, "not_a_question")
        if _too_short(line, zh):
            return Classification(False, "reaction")
        if zh:
            if any(word in line for word in _ZH_YOU):
                return Classification(False, "to_a_person")
        elif _says_you(line) and (_within(recent.addressed_at, now, window) or _personal_you(line)):
            return Classification(False, "to_a_person")
        return Classification(True, "question")


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
    if _asks(rest, zh):
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
    if words_before and words_before[-1] in _EN_ABOUT_BEFORE:
        return False
    if words_after:
        first = words_after[0]
        if first in _EN_ABOUT_AFTER and not (
            first == "is" and len(words_after) > 1 and words_after[1] in _EN_QUESTION_AFTER_IS
        ):
            return False
    if after.lstrip().startswith(("'s", ">", "<")):
        return False
    at_start = all(word in _EN_LEAD for word in words_before)
    at_end = not _EDGE.sub("", after) or not words_after
    # Set off by commas or a colon, a name is said to someone: "hello again, bot: ...".
    set_off = before.rstrip().endswith((",", "，")) or after.lstrip().startswith(_SET_OFF)
    return at_start or at_end or set_off


def _said_to_zh(before: str, after: str) -> bool:
    lead = _EDGE.sub("", before)
    for word in _ZH_LEAD:
        lead = lead.removeprefix(word)
    lead = _EDGE.sub("", lead)
    tail = _EDGE.sub("", after)
    if lead and tail:
        return False  # in the middle of a sentence: talked about
    if not lead and after.lstrip().startswith(_ZH_ABOUT_AFTER):
        return False  # "小爪说…", "机器人又答错了"
    return True


def _asks(rest: str, zh: bool) -> bool:
    """Whether what is said to the assistant, its name taken out, asks or requests something."""
    if _TRAILING.sub("", rest).endswith(("?", "？")):
        return True
    rest = _EDGE.sub("", rest)
    if not rest:
        return False
    if zh or _CJK.search(rest):
        for word in _ZH_LEAD:
            rest = rest.removeprefix(word)
        rest = _EDGE.sub("", rest)
        return bool(rest) and (_is_zh_question(rest) or any(w in rest for w in _ZH_REQUESTS))
    words = [word for word in _words(rest) if word not in _EN_LEAD]
    if not words:
        return False
    if words[0] in _EN_QUESTION_START and len(words) >= 2:
        return True
    return words[0] in _EN_REQUESTS or (words[0] in ("can", "could", "would", "will"))


def _words(line: str) -> list[str]:
    return _LATIN_WORD.findall(line)


def _is_en_question(line: str) -> bool:
    bare = _TRAILING.sub("", line)
    if bare.endswith(("?", "？")):
        return True
    words = _words(line)
    return bool(words) and words[0] in _EN_QUESTION_START and len(words) >= _MIN_EN_WORDS


def _is_zh_question(line: str) -> bool:
    bare = _TRAILING.sub("", line)
    if bare.endswith(("?", "？")) or bare.endswith(_ZH_QUESTION_ENDS):
        return True
    return any(word in line for word in _ZH_QUESTION_WORDS)


def _too_short(line: str, zh: bool) -> bool:
    if zh:
        return len(_CJK.findall(line)) + len(_words(line)) < _MIN_ZH_CHARS
    return len(_words(line)) < _MIN_EN_WORDS


def _addresses_group(line: str) -> bool:
    return any(word in _EN_GROUP for word in _words(line)) or any(
        phrase in line for phrase in _EN_GROUP_PHRASES
    )


def _says_you(line: str) -> bool:
    return any(word in _EN_YOU for word in _words(line))


def _personal_you(line: str) -> bool:
    """Whether a question's ``you`` is a person rather than anyone: it is anyone in a general
    how/can/does question (``how do you make a smoker``, ``can you sleep in the nether``) unless
    the words around it say a person (``are you``, ``did you``, ``can you give me``, ``you
    there``, ``your``)."""
    words = _words(line)
    if not words or words[0] not in _EN_GENERAL_START:
        return True  # "u coming?", "you there?": said to someone
    for index, word in enumerate(words):
        if word in _EN_PERSONAL_FORMS:
            return True
        if word not in ("you", "u", "ya"):
            continue
        before = words[index - 1] if index else ""
        after = words[index + 1] if index + 1 < len(words) else ""
        if before in _EN_PERSONAL_BEFORE or after in _EN_PERSONAL_AFTER or not after:
            return True
        if after in _EN_ASKED_OF_A_PERSON:
            return True
        if after in _EN_FAVOURS and any(w in _EN_FOR_ME for w in words[index + 2 :]):
            return True  # "can you give me some food", "could you help us"
    return False


def players_named(line: str, speaker: str, online: Collection[str]) -> list[str]:
    """The online players other than the speaker whom a line names (as whole words)."""
    lowered_line = line.lower()
    words = set(_words(lowered_line))
    own = speaker.lower()
    return [
        name
        for name in online
        if (lowered := name.lower()) != own and len(lowered) >= 3 and lowered in words
    ]


def _names_other_player(line: str, speaker: str, online: Collection[str]) -> bool:
    """A mention of another online player by name, or ``@someone`` who is not the assistant
    (the assistant's own names were checked first)."""
    if re.search(r"(?<![a-z0-9_])@[a-z0-9_]{3,16}", line):
        return True
    return bool(players_named(line, speaker, online))
