"""The meta-schema check and the safe validator of a schema's text: the part of
``SafeSchema.of`` that needs jsonschema, imported by the first schema the bridge does not ship
(``bridge.schemas.safe_schema``)."""

from __future__ import annotations

import functools
import json
from typing import Any, Final

import jsonschema
import referencing
import referencing.exceptions
from jsonschema.protocols import Validator

from bridge.schemas.keywords import safe_class
from bridge.schemas.safe_schema import SafeSchema
from bridge.schemas.shape import SchemaRefused, expanded

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


def _retrieve_nothing(uri: str) -> referencing.Resource[Any]:
    raise referencing.exceptions.NoSuchResource(uri)


NO_FETCH: Final = referencing.Registry(retrieve=_retrieve_nothing)  # type: ignore[call-arg]


@functools.lru_cache(maxsize=512)
def compiled(text: str, max_subschemas: int) -> SafeSchema:
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
