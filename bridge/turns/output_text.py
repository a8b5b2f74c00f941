"""Shaping model text for the two places players see it: the action bar and the reply."""

from __future__ import annotations

ELLIPSIS = "…"


def _without_torn_tag(text: str) -> str:
    # A cut can leave "<gre" at the end; drop it so the renderer does not show half a tag.
    opening = text.rfind("<")
    return text[:opening] if opening > text.rfind(">") else text


def cap_reply(text: str, limit: int) -> str:
    """At most `limit` characters, ending in an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return _without_torn_tag(text[: limit - len(ELLIPSIS)]).rstrip() + ELLIPSIS


def action_bar_tail(text: str, limit: int) -> str:
    """The newest `limit` characters on one line: the action bar shows where the answer is."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    tail = flat[-(limit - len(ELLIPSIS)) :]
    closing = tail.find(">")
    if closing != -1 and (tail.find("<") == -1 or tail.find("<") > closing):
        tail = tail[closing + 1 :]  # the cut fell inside a tag: skip its remainder
    return ELLIPSIS + tail.lstrip()
