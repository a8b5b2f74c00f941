"""How a player's identity reaches the model: only as the bridge writes it.

Two carriers, chosen in ``config.yml``:

- the Chat Completions ``name`` field on user messages (the authority for who spoke);
- an envelope the bridge generates around the message, ``<player>`` and ``<message>``, with
  both parts escaped so that nothing a player types can close the envelope or forge another.

The Responses protocol has no ``name`` on input messages, so it uses the envelope whenever
either setting is on. With both off the model gets no trusted attribution at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bridge.providers.items import PlayerMessage

# What OpenAI-compatible servers accept in a message ``name`` is [A-Za-z0-9_-]. Java names use
# [A-Za-z0-9_] only, so "-" is free to stand for what is not allowed: the Floodgate "." of a
# Bedrock name becomes "-" (".Admin" is "-Admin", never Java's "_Admin"), anything else "-hex-".
_NAME_FIELD_DISALLOWED = re.compile(r"[^A-Za-z0-9_]")
_NAME_FIELD_MAX = 64


@dataclass(frozen=True, kw_only=True, slots=True)
class IdentitySettings:
    """``identity.*`` from ``config.yml``.

    include_player_name_field: put the account name in the Chat Completions ``name`` field.
    include_player_content_prefix: wrap the text in the escaped ``<player>``/``<message>``
    envelope.
    """

    include_player_name_field: bool = True
    include_player_content_prefix: bool = False


def escape_envelope_text(text: str) -> str:
    """Escape the three characters that could open, close or fake an envelope tag."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def envelope(player: str, text: str) -> str:
    return (
        f"<player>{escape_envelope_text(player)}</player>\n"
        f"<message>{escape_envelope_text(text)}</message>"
    )


def name_field_value(player: str) -> str:
    """The account name as a valid ``name`` field, one field value per name."""
    cleaned = _NAME_FIELD_DISALLOWED.sub(_encoded, player)[:_NAME_FIELD_MAX]
    return cleaned or "_"


def _encoded(match: re.Match[str]) -> str:
    char = match.group()
    return "-" if char == "." else f"-{ord(char):x}-"


def chat_completions_user_message(
    message: PlayerMessage, settings: IdentitySettings
) -> dict[str, str]:
    """A Chat Completions ``role: user`` message for what a player wrote."""
    wire: dict[str, str] = {"role": "user", "content": message.text}
    if message.player is None:
        return wire
    if settings.include_player_content_prefix:
        wire["content"] = envelope(message.player, message.text)
    if settings.include_player_name_field:
        wire["name"] = name_field_value(message.player)
    return wire


def responses_user_message(message: PlayerMessage, settings: IdentitySettings) -> dict[str, str]:
    """A Responses input message for what a player wrote; never carries a ``name``."""
    wants_identity = settings.include_player_name_field or settings.include_player_content_prefix
    if message.player is not None and wants_identity:
        return {"role": "user", "content": envelope(message.player, message.text)}
    return {"role": "user", "content": message.text}
