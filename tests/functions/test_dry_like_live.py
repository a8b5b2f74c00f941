"""A dry run judges like a live run: the same Functions, run live over a real link (a scripted
plugin that resolves labels) and dry (`dry_run`, what `functions run` and the console call),
stop at the same operations with the same codes. A dry run once showed `op Steve` as
completed while a live run refused it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionsFile
from bridge.functions.dry_run import dry_run, verdict
from bridge.functions.engine import Engine
from bridge.functions.runtime import FunctionOutcome

from .live_link import WAIT_S, live_link
from .test_live_host import _call, _dispatch, _runtime

COMMANDS = [
    "op Steve",
    "/op Steve",
    "minecraft:op Steve",
    "execute run op Steve",
    'data merge block 1 2 3 {Command:"deop A"}',
    "stop",
    "say hello",
    "time set day",
    "//weather clear",
    "",
]


def _code(outcome: FunctionOutcome) -> str:
    result = outcome.result
    if result.get("status") == "refused":
        return str(result["output"]["code"])
    assert result.get("status") == "ok", result
    return "passed"


def _catalogue(*functions: dict[str, Any]) -> FunctionsFile:
    return FunctionsFile.model_validate(
        {"schema": 1, "api_version": 1, "functions": list(functions)}
    )


@pytest.mark.parametrize("opted_out", [False, True])
async def test_the_same_functions_get_the_same_verdict_dry_and_live(
    engine: Engine, opted_out: bool
) -> None:
    functions = []
    for number, command in enumerate(COMMANDS):
        spec = _dispatch("console", command, name=f"f{number}")
        spec["allow_never"] = opted_out
        functions.append(spec)
    opt_outs = frozenset(f["name"] for f in functions) if opted_out else frozenset()
    live_codes: dict[str, str] = {}
    async with live_link() as live:
        await live.connect()
        runtime = _runtime(live, engine, *functions, never_opt_outs=opt_outs)
        for spec in functions:
            live_codes[spec["name"]] = _code(await _call(runtime, spec["name"]))
    dry_codes: dict[str, str] = {}
    catalogue = _catalogue(*functions)
    for spec in functions:
        outcome = await asyncio.wait_for(
            dry_run(catalogue, FunctionLimits(), spec["name"], {}, "Steve"), WAIT_S
        )
        dry_codes[spec["name"]] = _code(outcome)
        (record,) = outcome.operations
        shown = verdict(record, "yes")
        if dry_codes[spec["name"]] == "never_listed":
            assert shown.startswith("refused: never ("), shown
        elif dry_codes[spec["name"]] == "passed":
            assert shown.startswith("would dispatch"), shown
    assert dry_codes == live_codes
    if not opted_out:
        assert live_codes["f0"] == "never_listed"  # op Steve
        assert live_codes["f6"] == "passed"  # say hello
