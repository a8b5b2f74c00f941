"""Text frames from ``message.yml``: the owner's template with plain and model-written values.

Plain values (player names, reasons, numbers) go in ``values`` and are shown as unparsed text;
only model output goes in ``model``, which the plugin renders with its restricted MiniMessage.
"""

from __future__ import annotations

from bridge.control.messages_file import MessagesFile
from bridge.link.messages import Text

MAX_VALUE_CHARS = 8192
"""The protocol's bound on one placeholder value."""


def template_of(messages: MessagesFile, key: str) -> str:
    """The template ``section.field`` of ``message.yml``; ``KeyError`` for an unknown key."""
    section_name, _, field = key.partition(".")
    section = getattr(messages, section_name, None)
    value = getattr(section, field, None) if section is not None and field else None
    if not isinstance(value, str):
        raise KeyError(key)
    return value


def _bounded(values: dict[str, str]) -> dict[str, str]:
    return {name: value[:MAX_VALUE_CHARS] for name, value in values.items()}


def text_for(
    messages: MessagesFile,
    key: str,
    values: dict[str, str] | None = None,
    *,
    model: dict[str, str] | None = None,
) -> Text:
    fields: dict[str, object] = {"template": template_of(messages, key)}
    if values:
        fields["values"] = _bounded(values)
    if model:
        fields["model"] = _bounded(model)
    return Text.model_validate(fields)
