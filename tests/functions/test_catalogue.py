"""The catalogue and limits models: exact fields, names, capabilities, schemas, limits."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from pydantic import ValidationError

from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import (
    CatalogueError,
    FunctionsFile,
    catalogue_problems,
    check_catalogue,
)

SOURCE = "async function onCall(ctx, api) { return {status: 'ok', output: {}}; }"


def entry(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "greet",
        "description": "Say hello",
        "enabled": True,
        "capabilities": ["approval.request"],
        "parameters": {"type": "object", "properties": {"who": {"type": "string"}}},
        "on_call": SOURCE,
    }
    base.update(overrides)
    return base


def catalogue(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"schema": 1, "api_version": 1, "functions": list(entries)}


def error_text(data: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as info:
        FunctionsFile.model_validate(data)
    return str(info.value)


def test_valid_catalogue_computes_the_source_hash() -> None:
    loaded = FunctionsFile.model_validate(catalogue(entry()))
    spec = loaded.get("greet")
    assert spec is not None
    assert spec.source_sha256 == hashlib.sha256(SOURCE.encode()).hexdigest()
    assert loaded.get("Greet") is None  # names are case-sensitive


@pytest.mark.parametrize("name", ["Greet", "1abc", "a..b", "a-", "-a", "a b", "", "a" * 65])
def test_bad_names_are_refused(name: str) -> None:
    assert "functions.0.name" in error_text(catalogue(entry(name=name)))


@pytest.mark.parametrize("name", ["a", "give.kit", "give-kit_2", "a1.b2-c3"])
def test_good_names_are_accepted(name: str) -> None:
    assert FunctionsFile.model_validate(catalogue(entry(name=name))).functions[0].name == name


def test_unknown_field_is_refused() -> None:
    assert "functions.0.source" in error_text(catalogue(entry(source="x")))


def test_unknown_top_level_field_and_wrong_versions_are_refused() -> None:
    assert "extra" in error_text({**catalogue(), "more": 1})
    assert "schema" in error_text({**catalogue(), "schema": 2})
    assert "api_version" in error_text({**catalogue(), "api_version": 2})


@pytest.mark.parametrize(
    ("capability", "phrase"),
    [
        ("native_tool.call.call_function", "may not call Functions"),
        ("native_tool.call.", "does not name a tool"),
        ("native_tool.call.Bad", "does not name a tool"),
        ("command.dispatch", "unknown capability"),
        ("command.dispatch.*", "unknown capability"),
    ],
)
def test_bad_capabilities_name_the_function_and_field(capability: str, phrase: str) -> None:
    text = error_text(catalogue(entry(capabilities=[capability])))
    assert "function 'greet', capabilities" in text
    assert phrase in text


def test_duplicate_capability_is_refused() -> None:
    text = error_text(catalogue(entry(capabilities=["approval.request", "approval.request"])))
    assert "listed twice" in text


def test_invalid_json_schema_is_refused_with_its_location() -> None:
    text = error_text(catalogue(entry(parameters={"type": "object", "properties": {"a": 3}})))
    assert "function 'greet', parameters: not a valid JSON Schema at properties/a" in text


def test_parameters_must_describe_an_object() -> None:
    assert '"type": "object"' in error_text(catalogue(entry(parameters={"type": "string"})))


def test_duplicate_names_are_refused() -> None:
    assert "defined more than once" in error_text(catalogue(entry(), entry()))


def test_source_over_the_limit_is_reported_by_name() -> None:
    limits = FunctionLimits(source_chars=64)
    loaded = FunctionsFile.model_validate(catalogue(entry(on_call=SOURCE + " " * 10)))
    assert catalogue_problems(loaded, limits) == [
        f"function 'greet', on_call: {len(SOURCE) + 10} characters, "
        "over the limit of 64 (functions.source_chars)"
    ]
    with pytest.raises(CatalogueError, match="greet"):
        check_catalogue(loaded, limits)
    check_catalogue(loaded, FunctionLimits())


def test_limits_refuse_unknown_fields_and_out_of_range_values() -> None:
    with pytest.raises(ValidationError, match="extra"):
        FunctionLimits.model_validate({"workflow_seconds": 3})
    with pytest.raises(ValidationError, match="sync_segment_ms"):
        FunctionLimits(sync_segment_ms=0)
    with pytest.raises(ValidationError, match="operations_per_call"):
        FunctionLimits(operations_per_call=10**9)
