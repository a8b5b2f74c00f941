"""What a line after ``/ai`` is: a subcommand, a question, or a line that could be either.

Questions and commands share one word space (``/ai new players get what?``, ``/ai history of
the end``), so a line is a subcommand only with that subcommand's exact shape:

- ``new`` alone, with a quoted title (``new "base ideas"``), or with a short title (at most
  ``SHORT_TITLE_WORDS`` words, no ``?`` and no question word such as "where"); a longer
  unquoted rest could be either, and the player is asked which was meant;
- ``list``, ``clear``, ``stop``, ``history`` and ``persona`` alone;
- ``switch``, ``rename`` and ``delete`` alone, which answer their usage and the conversations
  (nobody asks the one word as a question, and Paper's tab completion offers these words: a
  completed word sent as it was went to the model);
- ``history <id>``, ``switch <id>``, ``delete <id>`` with a conversation id;
- ``rename <id> <title>``;
- ``persona <name>``: one word, a persona's name (an unknown one is answered with the list).

Anything else is a question. A line ending in ``?`` is always a question.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bridge.conversations.shelf import CONVERSATION_ID

SHORT_TITLE_WORDS = 3
ALONE = frozenset({"list", "clear", "stop", "history", "persona"})
WITH_ID = frozenset({"history", "switch", "delete"})
NEEDS_ID = frozenset({"switch", "rename", "delete"})
"""Alone, a usage line and the conversations (`bridge.app.commands.conversations`)."""

# Words that make the rest of an unquoted `new` line a question, not a title.
QUESTION_WORDS = frozenset(
    "what where when why who whom whose which how can could should would do does did is are"
    " am was were will shall may might must".split()
)

Kind = Literal["command", "question", "ambiguous"]


@dataclass(frozen=True, slots=True)
class AiLine:
    kind: Kind
    keyword: str = ""
    """The subcommand (lower-cased) of a command or an ambiguous line."""
    rest: tuple[str, ...] = ()
    """Its words after the keyword; a quoted ``new`` title is one word, without the quotes."""


QUESTION = AiLine("question")


def read_ai_line(line: str) -> AiLine:
    """The kind of ``line`` (the text after ``/ai``, stripped)."""
    words = line.split()
    if not words:
        return QUESTION
    keyword, rest = words[0].lower(), words[1:]
    if line.rstrip().endswith("?"):
        return QUESTION
    if not rest:
        if keyword in ALONE or keyword in NEEDS_ID or keyword == "new":
            return AiLine("command", keyword)
        return QUESTION
    if keyword == "new":
        return _new(line, rest)
    if keyword in WITH_ID and len(rest) == 1 and CONVERSATION_ID.fullmatch(rest[0]):
        return AiLine("command", keyword, (rest[0],))
    if keyword == "rename" and len(rest) >= 2 and CONVERSATION_ID.fullmatch(rest[0]):
        return AiLine("command", keyword, tuple(rest))
    if keyword == "persona" and len(rest) == 1:
        # One word after it is a persona's name, or a mistyped one the reply then lists.
        return AiLine("command", keyword, (rest[0].lower(),))
    return QUESTION


def _new(line: str, rest: Sequence[str]) -> AiLine:
    title = line.split(None, 1)[1].strip()
    if len(title) >= 2 and title[0] == title[-1] and title[0] in "\"'":
        return AiLine("command", "new", (title[1:-1].strip(),))
    if any(word.strip(",.;:!").lower() in QUESTION_WORDS for word in rest):
        return QUESTION  # "new to the server, where do I start"; a quoted title stays one
    if len(rest) <= SHORT_TITLE_WORDS:
        return AiLine("command", "new", tuple(rest))
    return AiLine("ambiguous", "new", tuple(rest))
