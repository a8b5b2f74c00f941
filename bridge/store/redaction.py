"""A last line of defence against secrets in stored records.

Producers redact before they record; this only catches their mistakes. A field whose name looks
like a credential (``api_key``, ``authorization``, ``token``, ``secret``, ``password``, ...) has
its text value replaced by `MASK`, wherever it is nested, and any string value that starts with
``Bearer `` is masked whatever its field is called. Numbers, booleans and null under such names
are kept, so usage counts like ``token_count: 12`` survive; ``input_tokens`` is not a
credential name because the rule compares whole name segments, not substrings.
"""

from __future__ import annotations

from bridge.redaction import is_secret_name
from bridge.store.audit_sink import JSONValue

MASK = "[redacted]"


def _looks_like_bearer(value: str) -> bool:
    return value[:7].lower() == "bearer "


def _mask(value: JSONValue, secret_name: bool) -> JSONValue:
    if isinstance(value, dict):
        return {
            key: _mask(inner, secret_name or is_secret_name(key)) for key, inner in value.items()
        }
    if isinstance(value, list):
        return [_mask(inner, secret_name) for inner in value]
    if isinstance(value, str) and (secret_name or _looks_like_bearer(value)):
        return MASK
    return value


def mask_secrets(fields: dict[str, JSONValue]) -> dict[str, JSONValue]:
    """A copy of `fields` with credential-looking values masked. The input is not changed."""
    return {key: _mask(value, is_secret_name(key)) for key, value in fields.items()}
