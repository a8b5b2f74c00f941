"""The parameter schemas of the tools and Functions the bridge ships (``defaults/tools.yml``,
``defaults/functions.yml``), as ``SafeSchema`` measures them.

An owner who keeps them pays for jsonschema only when a tool's arguments are first checked:
``SafeSchema.of(..., vouched=shipped_schema_texts())`` defers their meta-schema check and
compilation, which `tests/schemas/test_shipped_schemas.py` runs on each of them.
"""

from __future__ import annotations

import functools
from typing import Any

import yaml

from bridge.control.layout import default_bytes
from bridge.schemas.safe_schema import MAX_CHARS, MAX_DEPTH
from bridge.schemas.shape import measured_text


def shipped_schemas() -> list[dict[str, Any]]:
    """Every ``parameters`` schema of the shipped tools.yml and functions.yml."""
    tools = yaml.safe_load(default_bytes("tools.yml")).get("tools") or {}
    functions = yaml.safe_load(default_bytes("functions.yml")).get("functions") or []
    return [entry["parameters"] for entry in [*tools.values(), *functions]]


@functools.cache
def shipped_schema_texts() -> frozenset[str]:
    return frozenset(measured_text(schema, MAX_CHARS, MAX_DEPTH) for schema in shipped_schemas())
