"""What a conversation's title is made from: one short request after its first answered turn,
the question and the answer in, a few words out (`bridge.app.requests.conversation_titles` sends
it)."""

from __future__ import annotations

from bridge.conversations.shelf import clean_title

INSTRUCTIONS = (
    "You name conversations. Reply with a title of at most six words for the conversation"
    " below, in the language of the question: no quotes, no final punctuation, nothing else."
)
MAX_OUTPUT_TOKENS = 24
MAX_PART_CHARS = 600
"""Of the question and of the answer, what the request carries (a title needs the start)."""


def title_document(question: str, answer: str) -> str:
    return (
        f"Question: {question.strip()[:MAX_PART_CHARS]}\n\n"
        f"Answer: {answer.strip()[:MAX_PART_CHARS]}"
    )


def title_from_reply(text: str) -> str | None:
    """The model's reply as a title: its first line, quotes and a closing full stop dropped,
    cleaned (`clean_title`); None when nothing is left."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    first = lines[0].strip().removeprefix("Title:").strip()
    first = first.strip("\"'`*“”‘’«»").rstrip(".。").strip()
    return clean_title(first)
