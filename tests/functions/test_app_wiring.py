"""The serve application offers `call_function` only when the catalogue has an enabled Function,
shares the link tools' prompts with Functions, and closes the engine at shutdown."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bridge.app.handler import AppHandler
from bridge.app.runtime import Runtime
from bridge.control import init_config_dir
from bridge.tools.registry import CallContext

from .live_link import STEVE, WAIT_S
from .test_live_tool import FUNCTIONS_YML

CONTEXT = CallContext(
    turn_id="turn-1", call_id="call-1", player_uuid=STEVE["uuid"], player_name="Steve"
)


def _runtime(tmp_path: Path, functions: str | None) -> Runtime:
    init_config_dir(tmp_path)
    if functions is not None:
        (tmp_path / "functions.yml").write_text(functions, encoding="utf-8")
    return Runtime.open(tmp_path)


def _status(runtime: Runtime, tool: str) -> str | None:
    registry = runtime.registry(runtime.plane)
    return next((e.status for e in registry.catalogue if e.name == tool), None)


async def test_call_function_is_offered_only_with_an_enabled_function(tmp_path: Path) -> None:
    shipped = _runtime(tmp_path / "shipped", None)
    mine = _runtime(tmp_path / "mine", FUNCTIONS_YML)
    try:
        assert _status(shipped, "call_function") == "not_built"
        assert _status(mine, "call_function") == "available"
        assert "call_function" in mine.registry(mine.plane).for_player(()).tools
    finally:
        await shipped.aclose()
        await mine.aclose()


async def test_functions_share_the_link_tools_and_stop_with_the_runtime(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, FUNCTIONS_YML)
    handler = AppHandler(runtime)
    try:
        assert runtime.functions.plugin is handler.link_tools.plugin
        assert runtime.functions.broker is handler.link_tools.broker
        # Native calls see every configured tool, gated ones included: a Function's declared
        # capabilities are the owner's grant, and the player's own gate is call_function's.
        native = runtime.function_tools(CONTEXT)
        assert "run_command" in native.tools.tools
        assert "run_command" not in runtime.registry(runtime.plane).for_player(()).tools
        # No link: the Function runs and its dispatch is refused as link_down, caught or not.
        result = await asyncio.wait_for(
            runtime.functions.call_function(
                {"name": "say-hello", "arguments": {"to": "Alex"}}, CONTEXT
            ),
            WAIT_S,
        )
        assert result["output"]["error_code"] == "link_down"
    finally:
        await asyncio.wait_for(runtime.aclose(), WAIT_S)
    after = await asyncio.wait_for(
        runtime.functions.call_function({"name": "say-hello", "arguments": {"to": "A"}}, CONTEXT),
        WAIT_S,
    )
    assert after["output"]["error_code"] == "engine_unavailable"
