"""The schemas the bridge ships are vouched for (``SafeSchema.of(..., vouched=...)`` defers
their meta-schema check and compilation to their first use, so a bridge with default files
imports no jsonschema at start): each must pass every rule, and a vouched schema must validate
exactly as a checked one."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from bridge.control.shipped_schemas import shipped_schema_texts, shipped_schemas
from bridge.schemas import SafeSchema
from bridge.schemas.compiled import compiled
from bridge.schemas.safe_schema import MAX_CHARS, MAX_DEPTH, MAX_SUBSCHEMAS
from bridge.schemas.shape import measured_text


def test_every_shipped_schema_passes_the_full_check() -> None:
    texts = shipped_schema_texts()
    assert len(texts) >= 10  # the built-in tools' and the example Function's
    for text in texts:
        compiled(text, MAX_SUBSCHEMAS)  # raises SchemaRefused on any rule broken


@pytest.mark.parametrize(
    "arguments", [{}, {"count": 4}, {"count": 40}, {"count": "4"}, {"count": 4, "more": 1}]
)
async def test_a_vouched_schema_validates_as_a_checked_one(arguments: dict[str, Any]) -> None:
    # The example Function's: bounds, a required field, no other properties.
    kit = next(schema for schema in shipped_schemas() if "count" in schema.get("required", []))
    vouched = SafeSchema.of(kit, vouched=shipped_schema_texts())
    checked = compiled(measured_text(kit, MAX_CHARS, MAX_DEPTH), MAX_SUBSCHEMAS)
    assert vouched is not checked
    found = await vouched.checked(arguments, size=40)
    assert found == await checked.checked(arguments, size=40)
    assert vouched.subschemas == checked.subschemas


def test_a_schema_not_shipped_is_checked_at_once() -> None:
    from bridge.schemas import SchemaRefused

    with pytest.raises(SchemaRefused):
        SafeSchema.of({"type": "object", "properties": {"a": {"type": 5}}}, vouched={"{}"})


async def test_a_vouched_schema_is_compiled_off_the_loop_on_its_first_check() -> None:
    # Its first use imports jsonschema and compiles it (about 0.1 s, seen on a Function's
    # first call): every player's chat would wait behind it on the loop.
    kit = next(schema for schema in shipped_schemas() if "count" in schema.get("required", []))
    text = measured_text(kit, MAX_CHARS, MAX_DEPTH)
    built_on: list[threading.Thread] = []

    def compile_later() -> SafeSchema:
        built_on.append(threading.current_thread())
        return compiled(text, MAX_SUBSCHEMAS)

    vouched = SafeSchema(kit, None, 0, compile_later=compile_later)
    assert await vouched.checked({"count": 4}, size=11) == []
    assert built_on and built_on[0] is not threading.main_thread()
    assert await vouched.checked({"count": "4"}, size=13)  # built once, checks as before
    assert len(built_on) == 1
