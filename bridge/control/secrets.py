"""Environment references and secret redaction.

``${NAME}`` in a control-plane value names an environment variable. It is looked up in the
process environment first, then in the folder's ``.env``; an empty value counts as unset so a
blank export in a shell does not hide the ``.env`` entry. Values are never interpolated any
further: a resolved value containing ``${...}`` is used verbatim.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from typing import Any

from pydantic import SecretStr, ValidationInfo

REDACTED = "***"

ENV_NAME_PATTERN = r"[A-Za-z_][A-Za-z0-9_]{0,127}"
WHOLE_ENV_REFERENCE = re.compile(rf"\$\{{({ENV_NAME_PATTERN})\}}")
# Inside a header value: ``${NAME}`` anywhere in the text.
EMBEDDED_REFERENCE = re.compile(rf"\$\{{({ENV_NAME_PATTERN})\}}")

# Placeholders resolved per request by the provider layer, never from the environment.
REQUEST_TEMPLATES: frozenset[str] = frozenset({"session_id", "user_agent"})


def whole_reference(value: str) -> str | None:
    """The variable name when ``value`` is exactly ``${NAME}``, otherwise ``None``."""
    match = WHOLE_ENV_REFERENCE.fullmatch(value)
    return match.group(1) if match else None


def lookup(name: str, environ: Mapping[str, str]) -> str | None:
    """The non-empty value of ``name`` in ``environ``, or ``None``."""
    value = environ.get(name)
    return value if value else None


def unset_reference(name: str, environ: Mapping[str, str]) -> str:
    """``${NAME} is not set in the environment or .env`` and, where a set variable has a
    similar name (a misspelling such as ``OPENAI_APIKEY`` for ``OPENAI_API_KEY``), which one.
    Only names are shown, never a value."""
    message = f"${{{name}}} is not set in the environment or .env"
    similar = similar_variable(name, environ)
    return message + (f"; did you mean ${{{similar}}}?" if similar else "")


def referenced_secret(
    value: Any, info: ValidationInfo, *, example: str, what: str, required: bool
) -> Any:
    """A secret field that must be exactly ``${NAME}`` (``config.yml`` is shared, ``.env`` is
    not): the resolved value, ``""`` when it is unset and not ``required``. Non-strings and
    ``""`` are left to the field's own validation."""
    if not isinstance(value, str) or value == "":
        return value
    name = whole_reference(value)
    if name is None:
        raise ValueError(
            f"must be an environment reference such as ${{{example}}}: keep the {what} itself "
            "in .env"
        )
    environ = context_environ(info)
    resolved = lookup(name, environ)
    if resolved is None and required:
        raise ValueError(unset_reference(name, environ))
    return resolved or ""


def similar_variable(name: str, environ: Mapping[str, str]) -> str | None:
    """The set variable whose name is nearest to ``name`` (case and ``_`` aside first), or
    ``None`` when none is close."""
    candidates = [key for key, value in environ.items() if value and key != name]
    folded = _folded(name)
    same = [key for key in candidates if _folded(key) == folded]
    if same:
        return sorted(same)[0]
    close = difflib.get_close_matches(name.upper(), [k.upper() for k in candidates], 1, 0.8)
    if not close:
        return None
    return next(key for key in sorted(candidates) if key.upper() == close[0])


def _folded(name: str) -> str:
    return name.replace("_", "").casefold()


def context_environ(info: ValidationInfo) -> Mapping[str, str]:
    """The environment a validator resolves ``${NAME}`` in: the validation context's
    ``environ`` (the loader passes the process environment merged with ``.env``), else the
    process environment."""
    context = info.context
    if isinstance(context, Mapping):
        environ = context.get("environ")
        if isinstance(environ, Mapping):
            return environ
    return os.environ


def merged_environment(process: Mapping[str, str], dotenv: Mapping[str, str]) -> dict[str, str]:
    """Process variables win over ``.env`` entries unless they are empty."""
    merged = dict(dotenv)
    merged.update({key: value for key, value in process.items() if value})
    return merged


def redact(text: str, secrets: list[str] | tuple[str, ...] | frozenset[str]) -> str:
    """Replace every occurrence of each secret (longest first) with ``***``."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


class Secret(SecretStr):
    """A ``SecretStr`` that shows itself as ``***`` in ``str()`` and ``repr()``."""

    def _display(self) -> str:
        return REDACTED
