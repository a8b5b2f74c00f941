"""Every schema the bridge validates against is data: nothing fetched, bounded, RE2 patterns,
``format`` an annotation, validation bounded in time. Each refused shape is a class of attack:
the cases below are several members of each, not one example."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError
from support.fetch_recorder import FetchRecorder, fetch_recorder

from bridge.control.functions_file import FunctionSpec
from bridge.control.tools_file import ToolSpec
from bridge.schemas import SafeSchema, SchemaRefused, TookTooLong, keywords


@pytest.fixture
def recorder() -> Iterator[FetchRecorder]:
    with fetch_recorder() as found:
        yield found


def fetching_schemas(url: str) -> list[tuple[dict[str, Any], str]]:
    """Schemas that would make a resolver open ``url``, each with the reason it is refused."""
    obj = {"type": "object"}
    return [
        ({**obj, "properties": {"x": {"$ref": f"{url}/a.json"}}}, "not a local JSON pointer"),
        (
            {**obj, "$id": f"{url}/root.json", "properties": {"x": {"$ref": "b.json"}}},
            "not a local",
        ),
        ({**obj, "properties": {"x": {"$ref": f"{url}/c.json#/x"}}}, "not a local JSON pointer"),
        ({**obj, "properties": {"x": {"$id": f"{url}/d/", "$ref": "#/y"}}}, "$id below the root"),
        ({**obj, "properties": {"x": {"$dynamicRef": f"{url}/e.json#m"}}}, "$dynamicRef"),
        ({**obj, "properties": {"x": {"$recursiveRef": "#"}}}, "$recursiveRef"),
        ({**obj, "$schema": f"{url}/meta.json"}, "not a JSON Schema draft"),
        ({**obj, "allOf": [{"$ref": f"//127.0.0.1:{url.rsplit(':', 1)[1]}/f"}]}, "not a local"),
    ]


def test_a_schema_that_would_fetch_is_refused_and_nothing_is_fetched(
    recorder: FetchRecorder,
) -> None:
    for schema, reason in fetching_schemas(recorder.url):
        with pytest.raises(SchemaRefused, match=reason.replace("$", r"\$")):
            SafeSchema.of(schema)
        with pytest.raises(ValidationError, match="parameters"):
            ToolSpec.model_validate({"handler": "read", "description": "d", "parameters": schema})
        with pytest.raises(ValidationError, match="parameters"):
            FunctionSpec(
                name="f",
                description="d",
                enabled=True,
                capabilities=[],
                parameters=schema,
                on_call="async function onCall() {}",
            )
    assert recorder.fetched == []


async def test_local_refs_are_followed_without_a_resolver(recorder: FetchRecorder) -> None:
    schema = {
        "type": "object",
        "$defs": {"Name": {"type": "string", "maxLength": 3}, "Pair": {"$ref": "#/$defs/Name"}},
        "properties": {"a": {"$ref": "#/$defs/Pair", "minLength": 2}, "b": {"$ref": "#"}},
    }
    with pytest.raises(SchemaRefused, match="recursive"):
        SafeSchema.of(schema)
    del schema["properties"]["b"]  # type: ignore[attr-defined]
    safe = SafeSchema.of(schema)
    assert [v.message for v in await safe.checked({"a": "abcd"}, size=12)] == ["'abcd' is too long"]
    assert [v.message for v in await safe.checked({"a": "a"}, size=9)] == ["'a' is too short"]
    assert await safe.checked({"a": "ab"}, size=10) == []
    assert recorder.fetched == []


@pytest.mark.parametrize(
    "schema",
    [
        # A chain of refs each used twice: 2**30 subschemas once expanded.
        {
            "type": "object",
            "$defs": {
                **{f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(30)},
                "d30": {"type": "string"},
            },
            "properties": {"x": {"$ref": "#/$defs/d0"}},
        },
        {"type": "object", "allOf": [{"minimum": i} for i in range(2_000)]},
    ],
)
def test_subschemas_are_bounded_after_refs_are_expanded(schema: dict[str, Any]) -> None:
    with pytest.raises(SchemaRefused, match="more than 1024 subschemas"):
        SafeSchema.of(schema)


def test_size_and_depth_are_bounded() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(40):
        deep = {"items": deep}
    with pytest.raises(SchemaRefused, match="deeper than 32"):
        SafeSchema.of({"type": "object", "properties": {"x": deep}})
    with pytest.raises(SchemaRefused, match="over 100 characters"):
        SafeSchema.of({"type": "object", "description": "x" * 100}, max_chars=100)


@pytest.mark.parametrize(
    "pattern", ["^(a+)+$", "^(a|a)*$", "^(a|aa)+$", "^([a-z]+)*[0-9]$", "(x+x+)+y"]
)
async def test_patterns_run_in_re2_whatever_their_quantifiers(pattern: str) -> None:
    """Each of these backtracks for ever in Python's re on 60 characters; RE2 is linear."""
    safe = SafeSchema.of(
        {
            "type": "object",
            "properties": {"x": {"type": "string", "pattern": pattern}},
            "patternProperties": {pattern: {"type": "integer"}},
            "additionalProperties": False,
            "propertyNames": {"pattern": pattern},
        }
    )
    hostile = "a" * 60 + "!"
    found = await safe.checked({"x": hostile, hostile: 1}, size=200)
    assert found and all(
        v.message.endswith("does not match " + repr(pattern))
        or "Additional properties" in v.message
        for v in found
    )


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "object", "properties": {"x": {"pattern": "(?=a)b"}}}, "not one RE2 runs"),
        ({"type": "object", "properties": {"x": {"pattern": r"(a)\1"}}}, "not one RE2 runs"),
        ({"type": "object", "patternProperties": {"(?<!x)y": {}}}, "not one RE2 runs"),
        (
            {"type": "object", "patternProperties": {"a": {}}, "unevaluatedProperties": False},
            "unevaluatedProperties beside patternProperties",
        ),
    ],
)
def test_a_pattern_re2_cannot_run_refuses_the_schema(schema: dict[str, Any], reason: str) -> None:
    with pytest.raises(SchemaRefused, match=reason):
        SafeSchema.of(schema)


async def test_format_is_an_annotation() -> None:
    safe = SafeSchema.of(
        {"type": "object", "properties": {"r": {"format": "regex"}, "e": {"format": "email"}}}
    )
    assert await safe.checked({"r": "(a+)+(", "e": "not an address"}, size=40) == []


async def test_unique_items_compares_canonical_forms_in_linear_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The bound is raised so a loaded machine cannot fail the linear check (it once took over
    # the 2 s at load 14); comparing 20,000 items pairwise would still run far past it.
    monkeypatch.setattr("bridge.schemas.safe_schema.BOUND_S", 20.0)
    safe = SafeSchema.of({"type": "object", "properties": {"u": {"uniqueItems": True}}})
    distinct = [[i, {"k": i}] for i in range(20_000)]
    assert await safe.checked({"u": distinct}, size=400_000) == []
    assert await safe.checked({"u": [*distinct, [5, {"k": 5.0}]]}, size=400_000) != []
    assert await safe.checked({"u": [1, True, {"a": 1, "b": 2}, {"b": 2, "a": 1}]}, size=40)
    assert await safe.checked({"u": [1, True, 0, False, None]}, size=40) == []


async def test_a_long_validation_ends_at_its_bound_off_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Large work never runs on the loop's thread, and it stops at the deadline."""
    threads: set[str] = set()
    original = keywords.matches

    def watched(pattern: str, text: str) -> bool:
        threads.add(threading.current_thread().name)
        return original(pattern, text)

    monkeypatch.setattr(keywords, "matches", watched)
    safe = SafeSchema.of({"type": "object", "properties": {"u": {"items": {"pattern": "a"}}}})
    found = await safe.checked({"u": ["a"] * 5_000}, size=30_000)
    assert found == [] and threads and all(n.startswith("schema-check") for n in threads)
    with pytest.raises(TookTooLong):
        safe.violations({"u": ["a"] * 5_000}, bound_s=0)
    monkeypatch.setattr("bridge.schemas.safe_schema.BOUND_S", 0.0)
    with pytest.raises(TookTooLong):
        await safe.checked({"u": ["a"] * 5_000}, size=30_000)
    assert asyncio.get_running_loop().is_running()
