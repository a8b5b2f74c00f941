"""The shipped message sets and how ``config.yml``'s ``locale`` picks one under ``message.yml``.

English is the code's own defaults (`bridge.control.messages_file`); every other set is a YAML
file in ``bridge/control/locales/`` validated with the very rules of ``message.yml`` (the same
restricted MiniMessage, the same placeholders). A line the owner writes in ``message.yml``
replaces the locale's line, except a line that is exactly the English default: the ``message.yml``
``init`` writes holds every English line, and a server switched to another locale must not keep
showing them.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any, Literal, get_args

from pydantic import BaseModel, ValidationError

from bridge.control.messages_file import MessagesFile
from bridge.control.problems import ConfigLoadError
from bridge.control.yaml_strict import load_strict_yaml

Locale = Literal["en", "zh_CN"]
LOCALES: tuple[str, ...] = get_args(Locale)
DEFAULT_LOCALE = "en"


class LocaleSetError(ValueError):
    """A shipped message set is broken (a packaging fault, caught by the tests)."""


@functools.cache
def locale_set(locale: str) -> MessagesFile:
    """Every line of ``locale``'s shipped set."""
    if locale == DEFAULT_LOCALE:
        return MessagesFile.model_validate({"schema": 1})
    if locale not in LOCALES:
        raise LocaleSetError(f"no message set for locale {locale!r}; known: {', '.join(LOCALES)}")
    name = f"{locale}.yml"
    return parse_locale_set(
        resources.files("bridge.control.locales").joinpath(name).read_bytes(), name
    )


def parse_locale_set(data: bytes, name: str) -> MessagesFile:
    """A message set read with the rules of ``message.yml``, which must hold every line."""
    try:
        document = load_strict_yaml(data, name, max_bytes=len(data))
        messages = MessagesFile.model_validate(document.value, strict=True)
    except (ConfigLoadError, ValidationError) as exc:
        raise LocaleSetError(f"the message set {name} is invalid: {exc}") from exc
    missing = [
        f"{section_name}.{field}"
        for section_name in MessagesFile.model_fields
        if isinstance(section := getattr(messages, section_name), BaseModel)
        for field in type(section).model_fields
        if section_name not in messages.model_fields_set or field not in section.model_fields_set
    ]
    if missing:
        raise LocaleSetError(f"the message set {name} lacks {', '.join(missing)}")
    return messages


def localised(messages: MessagesFile, locale: str) -> MessagesFile:
    """``messages`` (from ``message.yml``) over ``locale``'s set.

    Raises ``ValueError`` when the mix breaks a rule that spans lines (the approval prompt and
    intent together too long)."""
    if locale == DEFAULT_LOCALE:
        return messages
    base, english = locale_set(locale), locale_set(DEFAULT_LOCALE)
    merged: dict[str, Any] = {"schema": 1}
    for section_name in MessagesFile.model_fields:
        mine = getattr(messages, section_name)
        if not isinstance(mine, BaseModel):
            continue
        theirs, plain = getattr(base, section_name), getattr(english, section_name)
        section: dict[str, str] = {}
        for field in type(mine).model_fields:
            value = getattr(mine, field)
            owner_wrote = field in mine.model_fields_set and value != getattr(plain, field)
            section[field] = value if owner_wrote else getattr(theirs, field)
        merged[section_name] = section
    return MessagesFile.model_validate(merged)
