"""The embedded classifier: a deterministic yes or no for one listen-mode line, no model.

It says yes when the line

- **names the assistant** (``identity.name`` or one of ``listen.aliases``, as a whole word in
  Latin script, anywhere in Chinese text), unless it is a short reaction that only mentions it;
- is a **question directed at nobody else**: it asks something (a question mark, an English
  question word at its start, a Chinese question word or particle), names no other online
  player, addresses no group of players (``anyone``, ``guys``, 大家, 有人, ...), says no
  ``you`` to a person, and is more than a one-word reaction (``what?``, ``真的吗``);
- is a **follow-up**: the player the assistant answered last writes a question (or a line
  starting like a continuation: ``and``, ``what about``, 那, 还有) within
  ``listen.reply_window_ms`` of that answer; ``you`` then means the assistant.

Everything else is banter and stays overheard. English and Simplified Chinese (the locales the
bridge ships) are told apart per line, by the script it is written in, so a Chinese line on an
English server is read as Chinese. Pure: the caller passes the time and the players online.
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
]
"""Why the classifier decided as it did; `REASON_TEXT` says it in words."""

REASON_TEXT: dict[Reason, str] = {
    "named": "it names the assistant",
    "question": "a question directed at no other player",
    "follow_up": "a follow-up to the assistant's last answer",
    "other_player": "it names another player online",
    "to_players": "it addresses the other players",
    "to_a_person": "a question to a person, not the assistant",
    "reaction": "a short reaction, not a question",
    "not_a_question": "not a question and not addressed to the assistant",
}

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[a-z0-9_']+")
# Trailing decoration after a question mark: "really??", "how?!", "what? :)".
_TRAILING = re.compile(r"[\s!.~)(:;>\-<3xdp]*$")

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
class LastAnswer:
    """The assistant's latest public answer: whom it answered and when (monotonic seconds)."""

    player: str
    at: float


@dataclass(frozen=True, slots=True)
class ClassifierSettings:
    """``names``: the assistant's name and aliases; ``reply_window_s``: how long a follow-up
    counts."""

    names: tuple[str, ...]
    reply_window_s: float


@dataclass(frozen=True, slots=True)
class Classification:
    start: bool
    reason: Reason

    @property
    def text(self) -> str:
        return REASON_TEXT[self.reason]


def _ascii_word_pattern(words: Sequence[str]) -> re.Pattern[str] | None:
    """Matches any of ``words`` not glued to other Latin letters or digits (CJK around a name
    is a boundary: Chinese has no spaces)."""
    kept = sorted({w.strip().lower() for w in words if w.strip()}, key=len, reverse=True)
    if not kept:
        return None
    alternatives = "|".join(re.escape(w) for w in kept)
    return re.compile(rf"(?<![a-z0-9_])@?(?:{alternatives})(?![a-z0-9_])")


class Classifier:
    """Built per configuration (the names) and asked per line; holds no state between lines."""

    def __init__(self, settings: ClassifierSettings) -> None:
        self.settings = settings
        self._names = _ascii_word_pattern(settings.names)

    def classify(
        self,
        text: str,
        *,
        speaker: str,
        online: Collection[str],
        last_answer: LastAnswer | None,
        now: float,
    ) -> Classification:
        """``online``: names of the players online (the speaker among them or not)."""
        line = " ".join(text.lower().split())
        zh = _CJK.search(line) is not None
        named = self._names is not None and self._names.search(line) is not None
        question = _is_zh_question(line) if zh else _is_en_question(line)
        follow_up = (
            last_answer is not None
            and last_answer.player.lower() == speaker.lower()
            and 0 <= now - last_answer.at <= self.settings.reply_window_s
        )
        if named:
            # Naming it is addressing it; a bare mention in a reaction ("lol mineclaw") too.
            return Classification(True, "named")
        if _names_other_player(line, speaker, online):
            return Classification(False, "other_player")
        continuing = line.startswith(_ZH_CONTINUE if zh else _EN_CONTINUE)
        if follow_up and (question or continuing):
            return Classification(True, "follow_up")
        if zh:
            if any(word in line for word in _ZH_GROUP):
                return Classification(False, "to_players")
        elif _addresses_group(line):
            return Classification(False, "to_players")
        if not question:
            return Classification(False, "not_a_question")
        if _too_short(line, zh):
            return Classification(False, "reaction")
        if (any(word in line for word in _ZH_YOU)) if zh else _says_you(line):
            return Classification(False, "to_a_person")
        return Classification(True, "question")


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


def _names_other_player(line: str, speaker: str, online: Collection[str]) -> bool:
    """A mention of another online player by name, or ``@someone`` who is not the assistant
    (the assistant's own names were checked first)."""
    if re.search(r"(?<![a-z0-9_])@[a-z0-9_]{3,16}", line):
        return True
    own = speaker.lower()
    words = set(_words(line))
    for name in online:
        lowered = name.lower()
        if lowered == own or len(lowered) < 3:
            continue
        if lowered in words:
            return True
    return False
