"""One net for secrets: every item is redacted as it enters a turn.

What a turn holds is what every sink gets: the provider's requests (this turn's and every later
one that replays the session), the session in memory, the compaction transcript and so its
summary, the archive, a private lane's history. So the player's question, the lines listen mode
overheard and every item a model answered with are redacted here, once, on the way in; tool
results were redacted by the tool runner (`bridge.tools.invoke`), and the archive redacts every
item again on its own as a second line.

A reasoning item's ``opaque`` part is the provider's own (Responses replays it byte for byte,
encrypted content included) and is not touched; its readable ``text`` is.
"""

from __future__ import annotations

from collections.abc import Callable

from bridge.providers.items import AssistantText, PlayerMessage, Reasoning, ToolCall

Redact = Callable[[str], str]


def redacted_player(message: PlayerMessage, redact: Redact) -> PlayerMessage:
    text = redact(message.text)
    return message if text == message.text else message.model_copy(update={"text": text})


def redacted_answer(
    item: AssistantText | Reasoning | ToolCall, redact: Redact
) -> AssistantText | Reasoning | ToolCall:
    """A model's item with its text (a tool call's arguments: JSON text, whose strings keep
    their quotes around a placeholder) redacted; the same object when nothing changed."""
    if isinstance(item, ToolCall):
        arguments = redact(item.arguments)
        if arguments == item.arguments:
            return item
        return item.model_copy(update={"arguments": arguments})
    text = redact(item.text)
    return item if text == item.text else item.model_copy(update={"text": text})
