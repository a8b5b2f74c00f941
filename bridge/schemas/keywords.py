"""jsonschema's validator classes with every keyword made safe to run on a stranger's schema.

- ``pattern``, ``patternProperties`` and ``additionalProperties`` (which skips the names that
  match a ``patternProperties`` key) match with RE2, never Python's backtracking ``re``;
- ``uniqueItems`` compares canonical forms in a set (linear) instead of every pair;
- every keyword first checks the deadline of the validation running on its thread, so a
  validation that would run long stops at its bound wherever it is (``TookTooLong``);
- ``format`` is an annotation: the classes are built without a format checker.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema
import re2
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from bridge.schemas.deadline import TookTooLong, deadline
from bridge.schemas.shape import re2_options

Keyword = Callable[[Any, Any, Any, dict[str, Any]], Iterator[ValidationError] | None]


@functools.lru_cache(maxsize=1024)
def regexp(pattern: str) -> Any:
    """The compiled RE2 pattern (schemas were checked to compile when they were accepted)."""
    return re2.compile(pattern, re2_options())


def matches(pattern: str, text: str) -> bool:
    try:
        return regexp(pattern).search(text) is not None
    except UnicodeError:  # a lone surrogate from JSON's \\ud800: not text RE2 can read
        return False


def _pattern(
    validator: Any, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not matches(pattern, instance):
        yield ValidationError(f"{instance[:200]!r} does not match {pattern[:200]!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if matches(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional(instance: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [
        name
        for name in instance
        if name not in properties and not any(matches(p, name) for p in patterns)
    ]


def _additional_properties(
    validator: Any, allowed: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras = _additional(instance, schema)
    if validator.is_type(allowed, "object"):
        for name in extras:
            yield from validator.descend(instance[name], allowed, path=name)
    elif not allowed and extras:
        shown = ", ".join(repr(name[:64]) for name in sorted(extras)[:5])
        more = f" and {len(extras) - 5} more" if len(extras) > 5 else ""
        verb = "was" if len(extras) == 1 else "were"
        yield ValidationError(
            f"Additional properties are not allowed ({shown}{more} {verb} unexpected)"
        )


def canonical(value: Any) -> Any:
    """A hashable form under which two JSON values are equal exactly when JSON Schema says
    so (1 and 1.0 alike, true and 1 not, objects whatever their key order)."""
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, int | float):
        number = float(value)
        if number.is_integer() and abs(number) < 2**53:
            return ("n", int(number))
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("l", tuple(canonical(item) for item in value))
    if isinstance(value, dict):
        return ("o", frozenset((key, canonical(item)) for key, item in value.items()))
    return ("?", repr(value))


def _unique_items(
    validator: Any, unique: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        form = canonical(item)
        if form in seen:
            yield ValidationError("has non-unique elements")
            return
        seen.add(form)


REPLACED: dict[str, Keyword] = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "uniqueItems": _unique_items,
}


def _bounded(keyword: Keyword) -> Keyword:
    def run(validator: Any, value: Any, instance: Any, schema: dict[str, Any]) -> Any:
        if time.monotonic() > deadline.at:
            raise TookTooLong
        return keyword(validator, value, instance, schema)

    return run


@functools.cache
def safe_class(base: type[Validator]) -> type[Validator]:
    """``base`` with the keywords above; every keyword bounded by the thread's deadline."""
    keywords: dict[str, Keyword] = dict(base.VALIDATORS)
    for name, replacement in REPLACED.items():
        if name in keywords:
            keywords[name] = replacement
    bounded = {name: _bounded(keyword) for name, keyword in keywords.items()}
    return jsonschema.validators.extend(base, bounded)  # type: ignore[no-any-return,no-untyped-call]
