"""`call_function` as a running bridge binds it: the registry's handler, the plane in force, a
real link behind the host, the engine's life cycle, and the serve application's wiring (offered
only with an enabled Function, sharing the link tools' prompts, closed with the runtime)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bridge.app.chat.handler import AppHandler
from bridge.app.wiring.runtime import Runtime
from bridge.control import init_config_dir
from bridge.control.plane import ControlPlane, load_control_plane
from bridge.functions.live_tool import LiveFunctions, has_enabled_functions
from bridge.redaction import Redactor
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.assembly import registry_for
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.registry import CallContext

from .live_link import STEVE, WAIT_S, live_link

CONTEXT = CallContext(
    turn_id="turn-7", call_id="call-3", player_uuid=STEVE["uuid"], player_name="Steve"
)
FUNCTIONS_YML = """\
schema: 1
api_version: 1
functions:
  - name: say-hello
    description: Say hello on the console.
    enabled: true
    capabilities: [command.dispatch.console]
    parameters:
      type: object
      properties: {to: {type: string, maxLength: 16}}
      required: [to]
      additionalProperties: false
    on_call: |
      async function onCall(ctx, api) {
        const done = await api.invoke({action: "command.dispatch", input: {
          executor: "console", command: "say hello " + ctx.args.to + " from " + ctx.player.name}});
        return {status: "ok", output: done};
      }
"""


def _plane(tmp_path: Path, functions: str | None) -> ControlPlane:
    init_config_dir(tmp_path)
    if functions is not None:
        (tmp_path / "functions.yml").write_text(functions, encoding="utf-8")
    return load_control_plane(tmp_path)


def _model_path(plane: ControlPlane, functions: LiveFunctions, audit: MemoryAudit) -> ToolInvoker:
    registry = registry_for(plane, extra_handlers=functions.handlers())
    return ToolInvoker(
        registry.for_player(()),
        cooldowns=Cooldowns(cooldown_ms=0),
        redactor=Redactor(()),
        audit=audit,
    )


def test_the_shipped_catalogue_enables_nothing(tmp_path: Path) -> None:
    assert not has_enabled_functions(_plane(tmp_path / "default", None))
    assert has_enabled_functions(_plane(tmp_path / "mine", FUNCTIONS_YML))


async def test_a_model_call_runs_the_function_over_the_link(tmp_path: Path) -> None:
    plane = _plane(tmp_path, FUNCTIONS_YML)
    async with live_link() as live:
        plugin = await live.connect()
        functions = LiveFunctions(
            plane=lambda: plane,
            native_tools=lambda context: _model_path(plane, functions, live.audit),
            audit=live.audit,
        )
        functions.attach(live.plugin, live.broker)
        invoker = _model_path(plane, functions, live.audit)
        try:
            call = invoker.invoke(
                "call_function", {"name": "say-hello", "arguments": {"to": "Alex"}}, CONTEXT
            )
            outcome = await asyncio.wait_for(call, WAIT_S)
        finally:
            await asyncio.wait_for(functions.aclose(), WAIT_S)
    assert outcome.ok, outcome
    assert outcome.result["status"] == "ok"
    assert outcome.result["output"]["dispatch_status"] == "dispatched"
    assert plugin.sent("command.dispatch") == [
        {"executor": "console", "command": "say hello Alex from Steve"}
    ]
    kinds = [kind for kind, _ in live.audit.events]
    assert kinds == ["function.start", "function.operation", "function.end", "tool.invoke"]
    start = live.audit.events[0][1]
    assert start["source_sha256"] == plane.functions.functions[0].source_sha256


async def test_after_shutdown_a_call_is_answered_engine_unavailable(tmp_path: Path) -> None:
    plane = _plane(tmp_path, FUNCTIONS_YML)
    audit = MemoryAudit()
    functions = LiveFunctions(
        plane=lambda: plane,
        native_tools=lambda context: _model_path(plane, functions, audit),
        audit=audit,
    )
    await asyncio.wait_for(functions.start(), WAIT_S)
    await asyncio.wait_for(functions.aclose(), WAIT_S)
    result = await asyncio.wait_for(
        functions.call_function({"name": "say-hello", "arguments": {"to": "Alex"}}, CONTEXT),
        WAIT_S,
    )
    assert result["output"]["error_code"] == "engine_unavailable"
    assert [kind for kind, _ in audit.events] == []


@pytest.mark.parametrize("arguments", [{"to": "A" * 40}, {"to": 5}, {}])
async def test_bad_arguments_never_reach_the_link(tmp_path: Path, arguments: object) -> None:
    plane = _plane(tmp_path, FUNCTIONS_YML)
    async with live_link() as live:
        plugin = await live.connect()
        functions = LiveFunctions(
            plane=lambda: plane,
            native_tools=lambda context: _model_path(plane, functions, live.audit),
            audit=live.audit,
        )
        functions.attach(live.plugin, live.broker)
        try:
            result = await asyncio.wait_for(
                functions.call_function({"name": "say-hello", "arguments": arguments}, CONTEXT),
                WAIT_S,
            )
        finally:
            await asyncio.wait_for(functions.aclose(), WAIT_S)
    assert result["output"]["error_code"] == "invalid_arguments"
    assert result["output"]["violations"]
    assert plugin.sent("command.dispatch") == []


# ---- the serve application


def _app_runtime(tmp_path: Path, functions: str | None) -> Runtime:
    init_config_dir(tmp_path)
    if functions is not None:
        (tmp_path / "functions.yml").write_text(functions, encoding="utf-8")
    return Runtime.open(tmp_path)


def _status(runtime: Runtime, tool: str) -> str | None:
    registry = runtime.served.registry
    return next((e.status for e in registry.catalogue if e.name == tool), None)


async def test_call_function_is_offered_only_with_an_enabled_function(tmp_path: Path) -> None:
    shipped = _app_runtime(tmp_path / "shipped", None)
    mine = _app_runtime(tmp_path / "mine", FUNCTIONS_YML)
    try:
        assert _status(shipped, "call_function") == "not_built"
        assert _status(mine, "call_function") == "available"
        assert "call_function" in mine.served.registry.for_player(()).tools
        specs = mine.served.registry.for_player(()).specs
        spec = next(s for s in specs if s.name == "call_function")
        # The model reads each enabled Function's name, purpose and arguments, never its source.
        assert "- say-hello: Say hello on the console." in spec.description
        assert '"required":["to"]' in spec.description
        assert "onCall" not in spec.description and "api.invoke" not in spec.description
    finally:
        await shipped.aclose()
        await mine.aclose()


async def test_functions_share_the_link_tools_and_stop_with_the_app_runtime(tmp_path: Path) -> None:
    runtime = _app_runtime(tmp_path, FUNCTIONS_YML)
    handler = AppHandler(runtime)
    try:
        assert runtime.functions.plugin is handler.link_tools.plugin
        assert runtime.functions.broker is handler.link_tools.broker
        # Native calls see every configured tool, gated ones included: a Function's declared
        # capabilities are the owner's grant, and the player's own gate is call_function's.
        native = runtime.function_tools(CONTEXT)
        assert "run_command" in native.tools.tools
        assert "run_command" not in runtime.served.registry.for_player(()).tools
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
