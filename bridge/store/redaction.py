"""A last line of defence against secrets in stored records.

Producers redact before they record; this only catches their mistakes. A field whose name looks
like a credential (``api_key``, ``authorization``, ``token``, ``secret``, ``password``, ...) has
its text value replaced by `MASK`, wherever it is nested, and any string value that starts with
``Bearer `` is masked whatever its field is called. Numbers, booleans and null under such names
are kept, so usage counts like ``token_count: 12`` survive; ``input_tokens`` is not a
credential name because the rule compares whole name segments, not substrings.
"""

from __future__ import annotations

from bridge.store.audit_sink import JSONValue

MASK = "[redacted]"

# Whole segments of a field name split at '_' (after lower-casing, with '-' read as '_').
_SECRET_SEGMENTS = frozenset(
    {"token", "secret", "password", "passwd", "authorization", "apikey", "credential", "cookie"}
)
# Adjacent segment pairs that name a credential only together.
_SECRET_PAIRS = frozenset({("api", "key"), ("private", "key"), ("access", "key")})


def is_secret_name(name: str) -> bool:
    segments = name.lower().replace("-", "_").split("_")
    if any(segment in _SECRET_SEGMENTS for segment in segments):
        return True
    return any(pair in _SECRET_PAIRS for pair in zip(segments, segments[1:], strict=False))


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
