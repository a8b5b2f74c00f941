"""Every example Function we ship (the default `functions.yml` and the docs) works in a dry run,
and the default `config.yml` states the same Function limits as the code's defaults."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionsFile, FunctionSpec
from bridge.functions.engine import Engine
from bridge.functions.host import DryRunHost
from bridge.functions.runtime import FunctionRuntime
from bridge.store.audit_sink import MemoryAudit

ROOT = Path(__file__).resolve().parents[2]
DEFAULTS = ROOT / "bridge" / "control" / "defaults"
DOCS = ROOT / "docs" / "functions.md"
WAIT_S = 30.0


def _docs_catalogues() -> list[str]:
    blocks = re.findall(r"```yaml\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)
    return [block for block in blocks if re.search(r"^functions:", block, re.MULTILINE)]


def _shipped() -> list[tuple[str, FunctionSpec]]:
    sources = [("defaults/functions.yml", (DEFAULTS / "functions.yml").read_text("utf-8"))]
    sources += [(f"docs/functions.md block {i}", text) for i, text in enumerate(_docs_catalogues())]
    found = []
    for where, text in sources:
        catalogue = FunctionsFile.model_validate(yaml.safe_load(text))
        found += [(f"{where}: {spec.name}", spec) for spec in catalogue.functions]
    return found


SHIPPED = _shipped()


def _example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """The smallest arguments the schema accepts: each required property at its minimum."""
    made: dict[str, Any] = {}
    for name in schema.get("required", []):
        spec = schema["properties"][name]
        kind = spec.get("type")
        if kind == "integer":
            made[name] = spec.get("minimum", 1)
        elif kind == "string":
            made[name] = "a" * max(1, spec.get("minLength", 1))
        elif kind == "boolean":
            made[name] = True
        else:  # a new example with another shape must teach this helper, not pass silently
            raise AssertionError(f"no example value for {name!r} of type {kind!r}")
    return made


def test_examples_were_found() -> None:
    # Guards the extraction itself: both the default file and the docs carry an example.
    assert any(where.startswith("defaults/") for where, _ in SHIPPED)
    assert any(where.startswith("docs/") for where, _ in SHIPPED)


@pytest.mark.parametrize("approve", ["yes", "no", "timeout"])
@pytest.mark.parametrize(("where", "spec"), SHIPPED, ids=[where for where, _ in SHIPPED])
async def test_every_shipped_example_dry_runs(
    engine: Engine, where: str, spec: FunctionSpec, approve: str
) -> None:
    enabled = spec.model_copy(update={"enabled": True})  # examples ship disabled
    catalogue = FunctionsFile.model_validate(
        {"schema": 1, "api_version": 1, "functions": [enabled.model_dump()]}
    )
    host = DryRunHost(approve=approve)  # type: ignore[arg-type]
    runtime = FunctionRuntime(
        catalogue=catalogue,
        limits=FunctionLimits(),
        engine=engine,
        host=host,
        audit=MemoryAudit(),
    )
    outcome = await asyncio.wait_for(
        runtime.invoke(spec.name, _example_arguments(spec.parameters), player="Steve"), WAIT_S
    )
    assert outcome.result["status"] != "error", (where, outcome.result)
    assert outcome.operations, f"{where} attempted no operation"
    refused = [record for record in outcome.operations if record.status != "completed"]
    assert not refused, (where, refused)
    if approve == "yes":
        assert [action for action, _ in host.recorded][-1] == "command.dispatch"


def test_default_config_states_the_code_defaults_for_functions() -> None:
    config = yaml.safe_load((DEFAULTS / "config.yml").read_text("utf-8"))
    assert FunctionLimits.model_validate(config["functions"]) == FunctionLimits()
    assert set(config["functions"]) == set(FunctionLimits.model_fields)
