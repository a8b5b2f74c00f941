"""The schemas the bridge ships are vouched for (``SafeSchema.of(..., vouched=...)`` defers
their meta-schema check and compilation to their first use, so a bridge with default files
imports no jsonschema at start): each must pass every rule, and a vouched schema must validate
exactly as a checked one."""

from __future__ import annotations

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
