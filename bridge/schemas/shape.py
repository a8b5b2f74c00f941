"""What a JSON Schema may be before the bridge validates anything against it.

A schema is data from the owner or from a stranger (an MCP server's ``inputSchema``): it must
never make the bridge fetch, and its cost must be bounded before it is used. ``expanded``
checks one schema and returns a copy with every ``$ref`` replaced by what it points to, so
validation needs no resolver at all:

- its JSON is at most ``max_chars`` characters and nests at most ``max_depth`` levels;
- every ``$ref`` is local (``#`` or a JSON pointer ``#/...`` into the same document); a ref
  that reaches itself (a recursive schema) is refused, since its cost would follow the
  arguments' nesting rather than the schema's size;
- ``$dynamicRef``, ``$recursiveRef`` and an ``$id`` below the root (which would change what a
  local ref means) are refused;
- the expanded schema has at most ``max_subschemas`` subschemas (a chain of refs each used
  twice would otherwise double the work at every link);
- every ``pattern`` and ``patternProperties`` key compiles in RE2, the only regex engine
  validation uses; ``unevaluatedProperties`` beside ``patternProperties`` is refused because
  jsonschema matches those patterns with Python's backtracking ``re`` there.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from typing import Any

import re2

from bridge.regex_errors import re2_error_text

DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})
"""Keywords whose value is an instance, never a schema: nothing inside them is followed."""
NAME_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)
"""Keywords whose value maps names (not keywords) to subschemas."""
DEFINITIONS = frozenset({"$defs", "definitions"})
REFUSED_KEYWORDS = {
    "$dynamicRef": "a $dynamicRef (resolved at validation time, possibly outside the schema)",
    "$recursiveRef": "a $recursiveRef (resolved at validation time, possibly outside the schema)",
}


class SchemaRefused(ValueError):
    """The schema cannot be used; ``reason`` says why in one line."""

    def __init__(self, reason: str, where: str = "(root)") -> None:
        super().__init__(f"{reason} at {where}" if where != "(root)" else reason)
        self.reason = reason
        self.where = where


def measured_text(schema: Any, max_chars: int, max_depth: int) -> str:
    """The schema as canonical JSON, after its size and depth are checked."""
    if not isinstance(schema, dict):
        raise SchemaRefused("the schema is not a JSON object")
    depth = _depth(schema, max_depth)
    if depth > max_depth:
        raise SchemaRefused(f"the schema nests deeper than {max_depth} levels")
    try:
        text = json.dumps(schema, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise SchemaRefused(f"the schema is not JSON ({exc})") from None
    if len(text) > max_chars:
        raise SchemaRefused(f"the schema is over {max_chars} characters of JSON")
    return text


def _depth(value: Any, limit: int) -> int:
    """Nesting depth, without recursion and stopping just past ``limit``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if level > limit:
            return level
        if isinstance(node, dict):
            stack.extend((child, level + 1) for child in node.values())
        elif isinstance(node, list):
            stack.extend((child, level + 1) for child in node)
    return deepest


def expanded(schema: dict[str, Any], *, max_subschemas: int, legacy_refs: bool) -> Any:
    """A copy of ``schema`` with its local refs inlined; ``SchemaRefused`` if it breaks a rule.

    ``legacy_refs``: drafts 4 to 7, where a ``$ref`` replaces its siblings; from 2019-09 on
    they apply beside it (kept as an ``allOf`` at the same level, which means the same)."""
    _no_pattern_escape(schema)
    return _Expander(schema, max_subschemas, legacy_refs).schema(schema, "", ())


class _Expander:
    def __init__(self, root: dict[str, Any], budget: int, legacy_refs: bool) -> None:
        self._root = root
        self._budget = budget
        self._legacy = legacy_refs
        self.count = 0

    def schema(self, node: Any, where: str, following: tuple[str, ...]) -> Any:
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict):
            return node  # not a schema; the meta-schema check says so
        self.count += 1
        if self.count > self._budget:
            raise SchemaRefused(
                f"the schema has more than {self._budget} subschemas (refs expanded)"
            )
        for keyword, reason in REFUSED_KEYWORDS.items():
            if keyword in node:
                raise SchemaRefused(f"{reason} is not accepted", where or "(root)")
        if where and isinstance(node.get("$id"), str):
            raise SchemaRefused("an $id below the root is not accepted", where)
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            _re2(pattern, f"{where}/pattern")
        copied: dict[str, Any] = {}
        for keyword, value in node.items():
            here = f"{where}/{keyword}"
            if keyword in DATA_KEYWORDS or keyword == "$ref":
                copied[keyword] = value
            elif keyword in DEFINITIONS and isinstance(value, dict):
                continue  # only ref targets: inlined where they are used
            elif keyword in NAME_MAPS and isinstance(value, dict):
                if keyword == "patternProperties":
                    for name in value:
                        _re2(str(name), f"{here}/{name}")
                copied[keyword] = {
                    name: self.schema(sub, f"{here}/{name}", following)
                    for name, sub in value.items()
                }
            elif isinstance(value, dict):
                copied[keyword] = self.schema(value, here, following)
            elif isinstance(value, list):
                copied[keyword] = [
                    self.schema(item, f"{here}/{index}", following)
                    if isinstance(item, dict | bool)
                    else item
                    for index, item in enumerate(value)
                ]
            else:
                copied[keyword] = value
        ref = copied.pop("$ref", None)
        if ref is None:
            return copied
        if not isinstance(ref, str):
            return {**copied, "$ref": ref}  # not a ref; the meta-schema check says so
        target = self.schema(
            self._target(ref, where, following), f"{where}/$ref", (*following, ref)
        )
        if self._legacy or not copied:
            return target
        copied["allOf"] = [target, *copied.get("allOf", [])]
        return copied

    def _target(self, ref: str, where: str, following: tuple[str, ...]) -> Any:
        if not (ref == "#" or ref.startswith("#/")):
            raise SchemaRefused(
                f"$ref {ref[:120]!r} is not a local JSON pointer (the bridge fetches nothing)",
                where or "(root)",
            )
        if ref in following:
            raise SchemaRefused(f"$ref {ref[:120]!r} is recursive", where or "(root)")
        node: Any = self._root
        for part in _pointer(ref):
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise SchemaRefused(f"$ref {ref[:120]!r} points at nothing", where or "(root)")
        return node


def _pointer(ref: str) -> Iterator[str]:
    path = urllib.parse.unquote(ref[1:])
    if not path:
        return
    for part in path.split("/")[1:]:
        yield part.replace("~1", "/").replace("~0", "~")


def re2_options() -> Any:
    options = re2.Options()
    options.log_errors = False  # a refused pattern is reported with the schema, not on stderr
    return options


def _re2(pattern: str, where: str) -> None:
    try:
        re2.compile(pattern, re2_options())
    except re2.error as exc:
        raise SchemaRefused(
            f"pattern {pattern[:80]!r} is not one RE2 runs: {re2_error_text(exc)}", where
        ) from None
    except UnicodeError:
        raise SchemaRefused(f"pattern {pattern[:80]!r} is not valid text", where) from None


def _no_pattern_escape(schema: dict[str, Any]) -> None:
    keywords = set(_keywords(schema))
    if "patternProperties" in keywords and keywords & {"unevaluatedProperties"}:
        raise SchemaRefused(
            "unevaluatedProperties beside patternProperties is not accepted (it would match "
            "those patterns outside RE2)"
        )


def _keywords(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield from (str(key) for key in node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
