"""Functions end to end: a real LinkServer in this process, the testkit JVM linked to it, the
real V8 sandbox and the real audit log; every call made through ``ToolInvoker`` as a turn makes
it (the model's ``call_function``), with the host the app uses (``LiveFunctions``).

Prompt buttons are "clicked" by running ``/mineclaw approve|deny <token>`` as a player in the
testkit (plugin-java/testkit/CONTROL.md), which reaches the bridge as a ``command`` request.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bridge.control import init_config_dir
from bridge.control.plane import load_control_plane
from bridge.functions.live_tool import LiveFunctions
from bridge.link.messages import PlayerRef
from bridge.link.server import LinkServer, LinkSettings
from bridge.store.audit import AuditLog
from bridge.tools import CallContext, Cooldowns, ToolInvoker
from bridge.tools.assembly import redactor_for, registry_for
from bridge.tools.link_tools import LinkTools, PlaneWhitelist

from .link_tools_handler import LinkToolsHandler
from .processes import EVENT_TIMEOUT, TestkitProcess, require_testkit_jar

pytestmark = pytest.mark.jvm

TOKEN = "e2e-functions-token-0123456789abcdefghijklmnopq"
STEVE = PlayerRef(uuid="3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f", name="Steve")
ALEX = PlayerRef(uuid="0b6f7c1e-2d3a-4e5f-8a9b-0c1d2e3f4a5b", name="Alex")
APPROVER = ["mineclaw.command.approve"]
FUNCTIONS = """\
schema: 1
api_version: 1
functions:
  - name: bread-kit
    description: Give a player bread once they accept.
    enabled: true
    capabilities: [approval.request, command.dispatch.console]
    parameters:
      type: object
      properties:
        who: {type: string, maxLength: 16}
        wait_ms: {type: integer, minimum: 1000, maximum: 600000}
      required: [who, wait_ms]
      additionalProperties: false
    on_call: |
      async function onCall(ctx, api) {
        let answer;
        try {
          answer = await api.invoke({action: "approval.request", input: {
            player: ctx.args.who, timeout_ms: ctx.args.wait_ms,
            interaction: {type: "confirm", title: "Bread kit",
                          message: ctx.player.name + " offers you bread"}}});
        } catch (e) {
          return {status: "refused", output: {error_code: e.code}};
        }
        if (answer.approval_status !== "approved") {
          return {status: "declined", output: {approval_status: answer.approval_status}};
        }
        const done = await api.invoke({action: "command.dispatch", input: {
          executor: "console", command: "give " + ctx.args.who + " minecraft:bread 2"}});
        return {status: "ok", output: {approval_status: "approved", ...done}};
      }
  - name: who-is-on
    description: List the online players through the native tool.
    enabled: true
    capabilities: [native_tool.call.online_players]
    parameters: {type: object, additionalProperties: false}
    on_call: |
      async function onCall(ctx, api) {
        const r = await api.invoke({action: "native_tool.call",
                                    input: {tool: "online_players", arguments: {}}});
        return {status: r.operation_status, output: r};
      }
"""


class FunctionsHandler(LinkToolsHandler):
    """Chat as the placeholder; the link tools and Functions wired the way the app wires them."""


@dataclass
class World:
    testkit: TestkitProcess
    handler: FunctionsHandler
    invoker: ToolInvoker
    audit: AuditLog
    source_sha256: dict[str, str]

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        context = CallContext("turn-e2e", f"call-{name}", STEVE.uuid, STEVE.name)
        outcome = await asyncio.wait_for(
            self.invoker.invoke("call_function", {"name": name, "arguments": arguments}, context),
            EVENT_TIMEOUT,
        )
        assert outcome.ok, outcome
        result: dict[str, Any] = outcome.result
        return result

    async def prompted(
        self, name: str, arguments: dict[str, Any], to: str
    ) -> tuple[asyncio.Task[dict[str, Any]], dict[str, Any]]:
        """Starts the call; returns it and the approval event once `to`'s client shows it."""
        since = len(self.testkit.events)
        call = asyncio.create_task(self.call(name, arguments))
        shown = asyncio.create_task(
            self.testkit.wait_event(
                lambda e: e.get("event") == "approval" and e.get("to") == to, since=since
            )
        )
        done, _ = await asyncio.wait(
            {call, shown}, timeout=EVENT_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        if shown not in done:
            shown.cancel()
            pytest.fail(
                f"{to} was shown no prompt; the call: {call.result() if call.done() else '?'}"
            )
        return call, shown.result()

    async def click(self, player: str, event: dict[str, Any], answer: str, ref: str) -> list[str]:
        """Clicks the `answer` button of a shown prompt; the lines the player then saw."""
        [button] = [b for b in event["buttons"] if b["command"].startswith(f"/mineclaw {answer} ")]
        args = button["command"].removeprefix("/mineclaw ").split(" ")
        since = len(self.testkit.events)
        await self.testkit.send({"op": "command", "sender": player, "args": args, "ref": ref})
        await self.testkit.wait_event(lambda e: e == {"event": "command.done", "ref": ref})
        return [
            e["text"]
            for e in self.testkit.events[since:]
            if e.get("event") == "message" and e.get("to") == player
        ]

    def dispatches(self) -> list[tuple[str, str]]:
        return [
            (e["executor"], e["command"])
            for e in self.testkit.events
            if e.get("event") == "dispatch"
        ]

    def audit_events(self, prefix: str = "function.") -> list[tuple[str, dict[str, Any]]]:
        self.audit.flush()
        return [(e.kind, e.fields) for e in self.audit.events() if e.kind.startswith(prefix)]


@contextlib.asynccontextmanager
async def world(tmp_path: Path, *, config_yml: str | None = None) -> AsyncIterator[World]:
    require_testkit_jar()
    config = tmp_path / "config"
    init_config_dir(config)
    (config / "functions.yml").write_text(FUNCTIONS, encoding="utf-8")
    if config_yml is not None:
        (config / "config.yml").write_text(config_yml, encoding="utf-8")
    plane = load_control_plane(config, environ={})
    audit = AuditLog.in_data_dir(tmp_path / "data")
    tools = LinkTools(served=lambda: PlaneWhitelist.of(plane), audit=audit)

    def native_tools(context: CallContext) -> ToolInvoker:
        return ToolInvoker(
            registry.for_player(()),
            cooldowns=Cooldowns(cooldown_ms=0),
            redactor=redactor_for(plane),
            audit=audit,
        )

    functions = LiveFunctions(plane=lambda: plane, native_tools=native_tools, audit=audit)
    functions.attach(tools.plugin, tools.broker)
    await asyncio.wait_for(functions.start(), EVENT_TIMEOUT)  # not inside any workflow limit
    registry = registry_for(plane, extra_handlers={**tools.handlers(), **functions.handlers()})
    handler = FunctionsHandler(tools)
    token_file = tmp_path / "link.token"
    token_file.write_text(TOKEN, encoding="utf-8")
    try:
        async with LinkServer(
            token=TOKEN, handler=handler, settings=LinkSettings(port=0)
        ) as server:
            testkit = await TestkitProcess.start(server.url, token_file)
            try:
                await asyncio.wait_for(handler.linked.wait(), EVENT_TIMEOUT)
                # The testkit announces joins only once its side of the handshake is done too.
                await testkit.wait_event(lambda e: e.get("event") == "link.up")
                for player in (STEVE, ALEX):
                    await testkit.send(
                        {
                            "op": "player.add",
                            "name": player.name,
                            "uuid": player.uuid,
                            "permissions": APPROVER,
                        }
                    )
                    joined = await asyncio.wait_for(handler.joined.get(), EVENT_TIMEOUT)
                    assert joined == player.name
                invoker = ToolInvoker(
                    registry.for_player(()),
                    cooldowns=Cooldowns(cooldown_ms=0),
                    redactor=redactor_for(plane),
                    audit=audit,
                )
                hashes = {spec.name: spec.source_sha256 for spec in plane.functions.functions}
                yield World(testkit, handler, invoker, audit, hashes)
            finally:
                await testkit.shutdown()
    finally:
        await asyncio.wait_for(functions.aclose(), EVENT_TIMEOUT)
        audit.close()


def _kit(who: str, wait_ms: int = 60_000) -> dict[str, Any]:
    return {"who": who, "wait_ms": wait_ms}


async def test_approved_then_dispatched_on_the_console_and_audited(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        call, shown = await w.prompted("bread-kit", _kit("Alex"), to="Alex")
        assert shown["text"].startswith("Bread kit: Steve offers you bread")
        # Steve is not the target: his click is refused and the prompt stays open for Alex.
        stolen = await w.click("Steve", shown, "approve", ref="s1")
        assert stolen and not any("Accepted" in line for line in stolen)
        assert not call.done()
        lines = await w.click("Alex", shown, "approve", ref="a1")
        assert any("Accepted" in line for line in lines), lines
        result = await asyncio.wait_for(call, EVENT_TIMEOUT)
        assert result == {
            "status": "ok",
            "output": {
                "approval_status": "approved",
                "dispatch_status": "dispatched",
                "execution_result": "unknown",
                "feedback": ["Ran: give Alex minecraft:bread 2"],
                "executor": "console",
                "player": None,
            },
        }
        assert w.dispatches() == [("console", "give Alex minecraft:bread 2")]
        events = w.audit_events()
    sha = w.source_sha256["bread-kit"]
    assert [kind for kind, _ in events] == [
        "function.start",
        "function.operation",
        "function.operation",
        "function.end",
    ]
    assert all(fields["source_sha256"] == sha for _, fields in events)
    operations = [
        (f["action"], f["capability"], f["status"]) for k, f in events if k.endswith("operation")
    ]
    assert operations == [
        ("approval.request", "approval.request", "completed"),
        ("command.dispatch", "command.dispatch.console", "completed"),
    ]
    assert events[-1][1]["status"] == "ok" and events[-1][1]["operations"] == 2


async def test_denied_timed_out_and_offline_dispatch_nothing(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        call, shown = await w.prompted("bread-kit", _kit("Alex"), to="Alex")
        lines = await w.click("Alex", shown, "deny", ref="d1")
        assert any("Denied" in line for line in lines), lines
        denied = await asyncio.wait_for(call, EVENT_TIMEOUT)

        call, shown = await w.prompted("bread-kit", _kit("Alex", wait_ms=1_000), to="Alex")
        timed_out = await asyncio.wait_for(call, EVENT_TIMEOUT)
        late = await w.click("Alex", shown, "approve", ref="t1")

        never_online = await w.call("bread-kit", _kit("Herobrine"))

        call, shown = await w.prompted("bread-kit", _kit("Alex"), to="Alex")
        await w.testkit.send({"op": "player.remove", "name": "Alex"})
        assert await asyncio.wait_for(w.handler.quit.get(), EVENT_TIMEOUT) == "Alex"
        left = await asyncio.wait_for(call, EVENT_TIMEOUT)
        assert w.dispatches() == []
        events = w.audit_events()
    assert denied == {"status": "declined", "output": {"approval_status": "denied"}}
    assert timed_out == {"status": "declined", "output": {"approval_status": "timeout"}}
    assert late and not any("Accepted" in line for line in late)
    assert never_online == {"status": "refused", "output": {"error_code": "player_offline"}}
    assert left == {"status": "refused", "output": {"error_code": "player_offline"}}
    ends = [f["status"] for k, f in events if k == "function.end"]
    assert ends == ["declined", "declined", "refused", "refused"]
    failed = [
        f["error_code"] for k, f in events if k == "function.operation" and f["status"] == "failed"
    ]
    assert failed == ["player_offline", "player_offline"]


async def test_a_function_calls_a_native_tool_over_the_link(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        result = await w.call("who-is-on", {})
        tool_calls = w.audit_events("tool.invoke")
    assert result["status"] == "completed"
    names = sorted(result["output"]["output"]["players"])
    assert names == ["Alex", "Steve"]
    # One for the model's call_function, one for the Function's own online_players call.
    assert sorted(fields["tool"] for _, fields in tool_calls) == ["call_function", "online_players"]


async def test_cancelling_the_turn_closes_the_prompt_and_is_audited(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        call, shown = await w.prompted("bread-kit", _kit("Alex"), to="Alex")
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(call, EVENT_TIMEOUT)
        late = await w.click("Alex", shown, "approve", ref="c1")
        assert late and not any("Accepted" in line for line in late)
        assert w.dispatches() == []
        events = w.audit_events()
    assert [kind for kind, _ in events] == [
        "function.start",
        "function.operation",
        "function.cancel",
    ]
    assert events[1][1]["status"] == "cancelled"
    assert events[2][1]["error_code"] == "cancelled"
    assert all(f["source_sha256"] == w.source_sha256["bread-kit"] for _, f in events)


async def test_the_workflow_limit_ends_a_waiting_function_and_closes_its_prompt(
    tmp_path: Path,
) -> None:
    config = "schema: 1\nfunctions:\n  workflow_ms: 3000\n"
    async with world(tmp_path, config_yml=config) as w:
        call, shown = await w.prompted("bread-kit", _kit("Alex"), to="Alex")
        result = await asyncio.wait_for(call, EVENT_TIMEOUT)
        late = await w.click("Alex", shown, "approve", ref="w1")
        assert late and not any("Accepted" in line for line in late)
        assert w.dispatches() == []
        events = w.audit_events()
    assert result["output"]["error_code"] == "workflow_time_limit"
    assert [kind for kind, _ in events][-1] == "function.timeout"
    assert events[-1][1]["source_sha256"] == w.source_sha256["bread-kit"]
    assert [f["status"] for k, f in events if k == "function.operation"] == ["cancelled"]
