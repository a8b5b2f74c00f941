"""The restricted MiniMessage a ``message.yml`` template may use, read as the plugin reads it.

The plugin parses templates with MiniMessage (``dev.mineclaw.core.text.TemplateRules`` on the
Java side). So the check here finds tags the way MiniMessage's lexer does, not with a regular
expression: ``\\<`` and ``\\\\`` are escapes; a tag runs from ``<`` to the first ``>`` that is
not inside a quoted argument; a quoted argument (``'...'`` or ``"..."``) may hold ``<`` and
``>``, so ``<click:run_command:'<red>'>`` is one click tag, not a harmless ``<red>``; a ``<``
outside quotes starts the tag again. Every tag found must be a style tag (colours,
decorations, ``reset``, ``gradient``, ``rainbow``; arguments only where they take them, never
quoted) or one of the placeholders the field declares. Anything else is refused, so a
template that validates can never produce a click, hover, insertion or any other tag.

The cases both sides must agree on are data: ``docs/protocol/vectors/templates/``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

COLOURS = frozenset(
    "black dark_blue dark_green dark_aqua dark_red dark_purple gold gray grey dark_gray "
    "dark_grey blue green aqua red light_purple yellow white".split()
)
DECORATIONS = frozenset(
    "bold b italic i em underlined u strikethrough st obfuscated obf reset".split()
)
STYLE_WITH_ARGUMENT = frozenset({"color", "colour", "c", "gradient", "rainbow"})
_HEX = re.compile(r"#[0-9a-fA-F]{6}")
_STYLE_ARGUMENT = re.compile(r"(#[0-9a-fA-F]{6}|[a-z_]+)(:(#[0-9a-fA-F]{6}|[a-z_]+))*")


class TemplateRuleError(ValueError):
    """A template breaks the rules; the message names the tag."""


@dataclass(frozen=True, slots=True)
class Tag:
    """One tag as MiniMessage's lexer delimits it: ``body`` is what is between ``<`` and ``>``
    (without the ``/`` of a closing tag)."""

    closing: bool
    body: str

    @property
    def name(self) -> str:
        return self.body.partition(":")[0]

    @property
    def argument(self) -> str:
        return self.body.partition(":")[2]


def tags(template: str) -> Iterator[Tag]:
    """Every tag of ``template`` in order; `TemplateRuleError` for a quote left open in one."""
    index, end = 0, len(template)
    while index < end:
        char = template[index]
        if char == "\\" and template[index + 1 : index + 2] in ("<", "\\"):
            index += 2
            continue
        if char != "<":
            index += 1
            continue
        start, cursor, quote = index, index + 1, ""
        while cursor < end:
            current = template[cursor]
            if quote:
                if current == "\\" and template[cursor + 1 : cursor + 2] == quote:
                    cursor += 2
                    continue
                if current == quote:
                    quote = ""
            elif current in "'\"":
                quote = current
            elif current == "<":
                break  # MiniMessage starts the tag again here
            elif current == ">":
                body = template[start + 1 : cursor]
                closing = body.startswith("/")
                yield Tag(closing, body[1:] if closing else body)
                break
            cursor += 1
        if quote:
            raise TemplateRuleError(
                f"the tag starting at character {start + 1} has a quote that is never closed"
            )
        index = cursor + 1 if cursor < end and template[cursor] == ">" else max(cursor, start + 1)


def check(template: str, allowed: frozenset[str], required: frozenset[str]) -> None:
    """Raise `TemplateRuleError` naming the first tag or placeholder ``template`` may not use."""
    used: set[str] = set()
    for tag in tags(template):
        body, name, argument = tag.body, tag.name, tag.argument
        if body in allowed:
            if tag.closing:
                raise TemplateRuleError(f"</{body}> closes a placeholder; write <{body}> only")
            used.add(body)
            continue
        if name in COLOURS or name in DECORATIONS or _HEX.fullmatch(name):
            if argument:
                raise TemplateRuleError(f"tag <{body}> takes no argument")
            continue
        if name in STYLE_WITH_ARGUMENT:
            if argument and not _STYLE_ARGUMENT.fullmatch(argument):
                raise TemplateRuleError(
                    f"tag <{body}> has an invalid argument (colour names or #rrggbb, no quotes)"
                )
            continue
        names = ", ".join(f"<{p}>" for p in sorted(allowed)) or "none"
        slash = "/" if tag.closing else ""
        raise TemplateRuleError(
            f"<{slash}{body}> is not a style tag or a placeholder here (placeholders: {names})"
        )
    missing = sorted(required - used)
    if missing:
        raise TemplateRuleError(f"must contain {', '.join(f'<{p}>' for p in missing)}")
