"""A JSON Schema accepted for validation, and validation that is bounded in time.

``SafeSchema.of(schema)`` is the one door: the shape rules (``bridge.schemas.shape``), the
meta-schema of the draft the schema names (2020-12 when it names none), then a validator of the
safe class (``bridge.schemas.keywords``) over the expanded copy, with a registry that retrieves
nothing: no URL is ever opened because of a schema.

``violations`` runs on the calling thread under a deadline; ``checked`` is for the event loop:
a small schema on small arguments is checked in place (microseconds), anything larger on this
module's own two threads (never the loop's default executor), and either way a validation past
``BOUND_S`` ends as ``TookTooLong`` rather than holding anyone.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import jsonschema
import referencing
import referencing.exceptions
from jsonschema.protocols import Validator

from bridge.schemas.keywords import TookTooLong, deadline, safe_class
from bridge.schemas.shape import SchemaRefused, expanded, measured_text

MAX_CHARS: Final = 65_536
MAX_DEPTH: Final = 32
MAX_SUBSCHEMAS: Final = 1_024
BOUND_S: Final = 2.0
"""The longest one validation may take, wherever it runs."""
INLINE_WORK: Final = 20_000
"""Subschemas times argument characters under which a check runs in place on the loop."""
INLINE_S: Final = 0.005
"""An in-place check that takes longer than this starts again on the validation threads."""

DRAFTS: Final[dict[str, type[Validator]]] = {}
for _each in (
    jsonschema.Draft4Validator,
    jsonschema.Draft6Validator,
    jsonschema.Draft7Validator,
    jsonschema.Draft201909Validator,
    jsonschema.Draft202012Validator,
):
    _uri = str(_each.META_SCHEMA.get("$id") or _each.META_SCHEMA.get("id"))
    DRAFTS[_uri.rstrip("#")] = _each
    DRAFTS[_uri.rstrip("#") + "#"] = _each
LEGACY_REFS: Final[tuple[type[Validator], ...]] = (
    jsonschema.Draft4Validator,
    jsonschema.Draft6Validator,
    jsonschema.Draft7Validator,
)

_threads = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="schema-check")


def _retrieve_nothing(uri: str) -> referencing.Resource[Any]:
    raise referencing.exceptions.NoSuchResource(uri)


NO_FETCH: Final = referencing.Registry(retrieve=_retrieve_nothing)  # type: ignore[call-arg]


@dataclass(frozen=True, slots=True)
class Violation:
    path: tuple[str | int, ...]
    message: str

    @property
    def where(self) -> str:
        return "/".join(str(part) for part in self.path)


class SafeSchema:
    """A schema that passed the rules, with its bounded validator."""

    def __init__(self, schema: dict[str, Any], validator: Validator, subschemas: int) -> None:
        self.schema = schema
        self._validator = validator
        self.subschemas = subschemas

    @classmethod
    def of(
        cls,
        schema: Any,
        *,
        max_chars: int = MAX_CHARS,
        max_depth: int = MAX_DEPTH,
        max_subschemas: int = MAX_SUBSCHEMAS,
    ) -> SafeSchema:
        """The schema ready to validate with, or ``SchemaRefused`` naming the first problem."""
        text = measured_text(schema, max_chars, max_depth)
        return _compiled(text, max_subschemas)

    def violations(
        self, instance: Any, *, limit: int = 100, bound_s: float = BOUND_S
    ) -> list[Violation]:
        """At most ``limit`` problems of ``instance``; ``TookTooLong`` past ``bound_s``."""
        return self._run(instance, limit, time.monotonic() + bound_s)

    async def checked(self, instance: Any, *, size: int, limit: int = 100) -> list[Violation]:
        """``violations`` from the event loop, never holding it long. ``size``: the
        arguments' length as JSON text (the work is about subschemas times that)."""
        until = time.monotonic() + BOUND_S
        if self.subschemas * max(size, 1) <= INLINE_WORK:
            try:
                return self._run(instance, limit, min(until, time.monotonic() + INLINE_S))
            except TookTooLong:
                pass  # longer than its size said: the rest of the bound, off the loop
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(_threads, self._run, instance, limit, until)

    def _run(self, instance: Any, limit: int, until: float) -> list[Violation]:
        before = deadline.at
        deadline.at = until
        try:
            found: list[Violation] = []
            for error in _errors(self._validator, instance):
                found.append(Violation(tuple(error.absolute_path), error.message[:300]))
                if len(found) >= limit:
                    break
            return found
        except RecursionError:
            return [Violation((), "the arguments nest too deeply to check")]
        finally:
            deadline.at = before


@functools.lru_cache(maxsize=512)
def _compiled(text: str, max_subschemas: int) -> SafeSchema:
    """Checking against the meta-schema dominates a reload or a listing; the answer depends
    only on the schema's text (a refusal is raised again each time, not cached)."""
    schema = json.loads(text)
    draft = _draft(schema)
    try:
        copy = expanded(schema, max_subschemas=max_subschemas, legacy_refs=draft in LEGACY_REFS)
    except RecursionError:
        raise SchemaRefused("the schema nests too deeply") from None
    try:
        # format is an annotation: no format checker, not even for the meta-schema's "regex".
        draft.check_schema(schema, format_checker=None)  # type: ignore[call-arg]
    except jsonschema.SchemaError as exc:
        where = "/".join(str(part) for part in exc.absolute_path) or "(root)"
        raise SchemaRefused(f"not a valid JSON Schema at {where}: {exc.message[:200]}") from None
    except RecursionError:
        raise SchemaRefused("the schema nests too deeply") from None
    validator = safe_class(draft)(copy, registry=NO_FETCH)
    return SafeSchema(schema, validator, _count(copy))


def _errors(validator: Validator, instance: Any) -> Iterator[jsonschema.ValidationError]:
    yield from validator.iter_errors(instance)


def _draft(schema: dict[str, Any]) -> type[Validator]:
    named = schema.get("$schema")
    if named is None:
        return jsonschema.Draft202012Validator
    if not isinstance(named, str) or named not in DRAFTS:
        raise SchemaRefused(
            f"$schema {str(named)[:120]!r} is not a JSON Schema draft this bridge knows "
            "(4, 6, 7, 2019-09, 2020-12)"
        )
    return DRAFTS[named]


def _count(value: Any) -> int:
    count, stack = 0, [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            count += 1
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


__all__ = ["SafeSchema", "SchemaRefused", "TookTooLong", "Violation"]
