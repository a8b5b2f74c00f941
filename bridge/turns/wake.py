"""Which public chat messages wake the agent, and what the question is.

An explicit wake is a message that starts with ``chat.public_prefix`` or matches
``chat.wake_pattern``:

- The prefix is compared exactly (case-sensitive), as the plugin compares it when it decides
  what to forward. When the prefix ends in a letter, digit or ``_``, the next character must
  not be one of those, so ``@airplane`` is not a wake for the prefix ``@ai``.
- The wake pattern is an RE2 expression matched *anchored at the start* of the message and
  *not* at its end (the semantics of ``re.match``): ``(?i)hey bot`` wakes on
  ``Hey bot, what time is it``. Use ``(?i)`` for case-insensitivity. A pattern that matches an
  empty message is refused, because it would turn every message into a wake.
- The question is what follows the prefix or the match, without leading blanks, commas and
  colons. An empty question gets a private hint instead of a turn.

With listen mode on, every other non-blank message is an implicit wake whose question is the
whole message. RE2 runs in time linear in the message, whatever the owner's pattern.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from bridge.control.wake_pattern import compile_wake_pattern
from bridge.errors import TurnError

_QUESTION_LEAD = " \t,:"


class WakePatternError(TurnError):
    """``chat.wake_pattern`` is not a usable RE2 expression."""


class ChatWakeSettings(Protocol):
    """The part of ``config.yml``'s ``chat`` section this module reads."""

    @property
    def public_prefix(self) -> str: ...

    @property
    def wake_pattern(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class ExplicitWake:
    question: str


@dataclass(frozen=True, slots=True)
class EmptyWake:
    """The prefix or pattern alone: the sender gets a private hint, no turn starts."""


@dataclass(frozen=True, slots=True)
class ImplicitWake:
    question: str


Wake = ExplicitWake | EmptyWake | ImplicitWake


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


class WakeRules:
    """The compiled wake rules of one control-plane snapshot."""

    def __init__(self, *, public_prefix: str, wake_pattern: str | None = None) -> None:
        if not public_prefix:
            raise WakePatternError("chat.public_prefix must not be empty")
        self.public_prefix = public_prefix
        self.wake_pattern = wake_pattern
        self._pattern: Any = None
        if wake_pattern is not None:
            try:
                self._pattern = compile_wake_pattern(wake_pattern)
            except ValueError as exc:
                raise WakePatternError(f"chat.wake_pattern: {exc}") from None

    @classmethod
    def from_settings(cls, chat: ChatWakeSettings) -> WakeRules:
        return cls(public_prefix=chat.public_prefix, wake_pattern=chat.wake_pattern)

    @property
    def needs_every_message(self) -> bool:
        """True when the plugin must forward all chat, not only prefixed messages."""
        return self._pattern is not None

    def explicit(self, text: str) -> ExplicitWake | EmptyWake | None:
        rest = self._after_prefix(text)
        if rest is None and self._pattern is not None:
            match = self._pattern.match(text)
            if match is not None:
                rest = text[match.end() :]
        if rest is None:
            return None
        question = rest.lstrip(_QUESTION_LEAD).strip()
        return ExplicitWake(question) if question else EmptyWake()

    def classify(self, text: str, *, listen: bool) -> Wake | None:
        """The wake this message is, or None when it should pass untouched."""
        wake = self.explicit(text)
        if wake is not None:
            return wake
        if listen and text.strip():
            return ImplicitWake(text.strip())
        return None

    def _after_prefix(self, text: str) -> str | None:
        prefix = self.public_prefix
        if not text.startswith(prefix):
            return None
        rest = text[len(prefix) :]
        if rest and _is_word_char(prefix[-1]) and _is_word_char(rest[0]):
            return None
        return rest
