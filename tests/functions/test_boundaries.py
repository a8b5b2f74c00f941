"""Limits on values crossing the sandbox boundary, and skill references, without an engine."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionSpec
from bridge.functions.arguments import InvalidArguments, validate_arguments
from bridge.functions.results import JSONLimitError, dump_limited, parse_limited, parse_return
from bridge.functions.review import SkillText, function_references

LIMITS = FunctionLimits(argument_chars=200, argument_depth=3, argument_members=10)


def spec(parameters: dict[str, Any] | None = None) -> FunctionSpec:
    return FunctionSpec(
        name="f",
        description="d",
        enabled=True,
        capabilities=[],
        parameters=parameters or {"type": "object"},
        on_call="async function onCall() {}",
    )


def nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("arguments", "phrase"),
    [
        ({"a": "x" * 300}, "characters, over 200"),
        ({"a": nested(3)}, "nested deeper than 3"),
        ({"a": list(range(11))}, "more than 10 members"),
        ({"a": float("nan")}, "not JSON"),
        ({"a": object()}, "not JSON"),
        ("{}", "must be a JSON object, not str"),
        (None, "must be a JSON object, not NoneType"),
    ],
)
async def test_argument_caps_come_before_the_schema(arguments: Any, phrase: str) -> None:
    with pytest.raises(InvalidArguments) as info:
        await validate_arguments(spec(), arguments, LIMITS)
    assert len(info.value.violations) == 1
    assert phrase in info.value.violations[0]


async def test_a_hostile_depth_does_not_exhaust_the_stack() -> None:
    with pytest.raises(InvalidArguments, match="nested deeper"):
        await validate_arguments(spec(), {"a": nested(100_000)}, LIMITS)


async def test_schema_violations_name_their_path() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "who": {"type": "string", "maxLength": 3}},
        "required": ["n"],
    }
    with pytest.raises(InvalidArguments) as info:
        await validate_arguments(spec(schema), {"who": "Notch"}, LIMITS)
    assert sorted(info.value.violations) == [
        "(root): 'n' is a required property",
        "who: 'Notch' is too long",
    ]
    assert await validate_arguments(spec(schema), {"n": 1}, LIMITS) == {"n": 1}


def test_parse_limited_checks_size_before_parsing() -> None:
    with pytest.raises(JSONLimitError, match="characters"):
        parse_limited("[" * 50_000 + "]" * 50_000, chars=1_000, depth=5, members=5)
    with pytest.raises(JSONLimitError, match="nested deeper"):
        parse_limited("[" * 5_000 + "]" * 5_000, chars=100_000, depth=5, members=5)
    with pytest.raises(JSONLimitError, match="not JSON"):
        parse_limited("{'a': 1}", chars=100, depth=5, members=5)
    assert parse_limited('{"a": [1, 2]}', chars=100, depth=2, members=3) == {"a": [1, 2]}


def test_dump_limited_refuses_what_json_cannot_hold() -> None:
    with pytest.raises(JSONLimitError, match="not JSON"):
        dump_limited({"x": float("inf")}, chars=100, depth=5, members=5)
    assert json.loads(dump_limited({"x": "é"}, chars=100, depth=5, members=5)) == {"x": "é"}


def test_parse_return_names_the_problem() -> None:
    with pytest.raises(JSONLimitError, match="output"):
        parse_return({"status": "ok", "output": [1]})
    assert parse_return({"status": "ok", "output": {}}).status == "ok"


def test_function_references_in_skill_text() -> None:
    text = (
        "Use function:starter-kit, then function:vip.kit-2 (not function:Bad).\n"
        'call_function {"name": "gold-kit", "arguments": {}}\n'
        '{"name": "not-a-call"}\n'
    )
    assert function_references(text) == ["starter-kit", "vip.kit-2", "gold-kit"]


def test_review_lines_for_chat() -> None:
    from bridge.control.functions_file import FunctionsFile
    from bridge.functions.review import review_catalogue, review_lines

    entry = {
        "name": "kit",
        "description": "d",
        "enabled": False,
        "capabilities": ["native_tool.call.teleport"],
        "parameters": {"type": "object"},
        "on_call": "async function onCall() {}",
    }
    catalogue = FunctionsFile.model_validate({"schema": 1, "api_version": 1, "functions": [entry]})
    review = review_catalogue(
        catalogue,
        FunctionLimits(),
        skills=[SkillText("workspace/skills/a.md", "body", 6, "use function:kit or function:gone")],
        known_tools=frozenset({"player_snapshot"}),
    )
    lines = review_lines(review)
    digest = catalogue.functions[0].source_sha256
    assert lines[0].startswith(f"kit [problem] sha256 {digest[:16]}... 1 capabilities")
    assert "no native tool 'teleport' is configured" in lines[0]
    assert lines[1] == "workspace/skills/a.md:6: body: names unknown Function 'gone'"
    assert lines[-1] == "catalogue has problems"
    assert not review.ok
