"""An MCP tool call through the bridge against the same call made directly with the SDK.

Run: ``python -m bench.mcp_bench``. Two copies of one stdio MCP server (``bench.mcp_echo_server``,
the official SDK's) run side by side: one behind the bridge's MCP client, called through the
one tool path a turn uses (the registry, argument validation against the server's schema, the
cooldown, the MCP call, the result cut and marked, redaction, both audit records), the other
called with the SDK's own ``Client`` directly. Rounds alternate between the two so a change in
the machine's load falls on both (call by call: in blocks of 50 a change of load between blocks
moved the ratio from 1.2x to 1.5x); each prints p50 and p99 and the bridge's p50 as a multiple
of the direct one (goal: at most 1.2x).

The witness rows: a player's chat verdict (the application's ``on_chat``, started as its own
task so it waits for whatever the loop is doing) while the same server sends a 32 MiB answer on
one line, against the same verdict with the server idle, rounds alternating. The answer is cut at
the pipe (``result_too_large``); the goal is a busy p50 at most 1.5x the idle p50. Two more rows
time the witness while a call writes what nobody asked for: 8 MiB of 100-byte notifications on
the wire, and 16 MiB on stderr (same goal).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bridge.app.chat.handler import AppHandler
from bridge.app.wiring.runtime import Runtime
from bridge.control import init_config_dir
from bridge.control.config_file import ConfigFile
from bridge.control.tools_file import ToolsFile
from bridge.link.messages import ChatRequest, PlayerRef
from bridge.mcp.clients import McpClients
from bridge.mcp.connection import State
from bridge.redaction import Redactor
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.registry import CallContext, ToolRegistry

SERVER = str(Path(__file__).with_name("mcp_echo_server.py"))
WITNESS_GOAL = 1.5
WITNESS_ROUNDS = 6
WITNESS_IDLE_SAMPLES = 60
BIG_MEGABYTES = 32
HOSTILE = (
    (f"{BIG_MEGABYTES} MiB answer", "big", {"megabytes": BIG_MEGABYTES}, "result_too_large"),
    ("8 MiB of notifications", "flood", {"megabytes": 8, "line_bytes": 100}, None),
    ("16 MiB on stderr", "flood", {"megabytes": 16, "line_bytes": 1000, "fd": 2}, None),
)
WITNESS = PlayerRef(uuid="0b6a1c9e-1111-4c6a-9e2f-1a2b3c4d5e6f", name="Alex")
ROUNDS = 20
CALLS_PER_ROUND = 50
GOAL = 1.2
TEXT = "where is the nearest village? " * 4


def _quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _bridge_invoker(workspace: Path) -> tuple[McpClients, ToolInvoker]:
    config = ConfigFile.model_validate(
        {
            "schema": 1,
            "mcp": {
                "enabled": True,
                "servers": {
                    "bench": {
                        "transport": "stdio",
                        "command": sys.executable,
                        "args": [SERVER],
                        "read": [str(Path(SERVER).parent)],
                    }
                },
            },
        },
        context={"environ": {}},
    ).mcp
    audit = MemoryAudit()
    redactor = Redactor()
    clients = McpClients(audit=audit, redact=redactor.redact_text)
    changed = asyncio.Event()
    clients.add_listener(changed.set)
    clients.apply(config, workspace)
    async with asyncio.timeout(60):
        while clients.connections["bench"].state is not State.READY:
            changed.clear()
            await changed.wait()
    registry = ToolRegistry.from_tools_file(
        ToolsFile.model_validate({"schema": 1}), {}, extra=clients.tools()
    )
    invoker = ToolInvoker(
        registry.for_player(frozenset()),
        cooldowns=Cooldowns(cooldown_ms=0),
        redactor=redactor,
        audit=audit,
    )
    return clients, invoker


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        clients, invoker = await _bridge_invoker(Path(folder))
        direct_client = Client(
            StdioServerParameters(command=sys.executable, args=[SERVER]), mode="legacy", cache=None
        )
        arguments = {"text": TEXT}
        text_arguments = json.dumps(arguments)
        direct: list[float] = []
        bridged: list[float] = []
        async with direct_client as direct_session:
            for index in range(ROUNDS * CALLS_PER_ROUND // 5):  # warm both paths up
                await direct_session.call_tool("echo", arguments)
                context = CallContext("bench", f"w{index}", "uuid", "Steve")
                await invoker.invoke("mcp__bench__echo", text_arguments, context)
            for round_ in range(ROUNDS):
                for index in range(CALLS_PER_ROUND):
                    started = time.perf_counter()
                    result = await direct_session.call_tool("echo", arguments)
                    direct.append(time.perf_counter() - started)
                    assert not result.is_error
                    context = CallContext("bench", f"c{round_}-{index}", "uuid", "Steve")
                    started = time.perf_counter()
                    outcome = await invoker.invoke("mcp__bench__echo", text_arguments, context)
                    bridged.append(time.perf_counter() - started)
                    assert outcome.ok, outcome
        await clients.aclose()
    ratio = statistics.median(bridged) / statistics.median(direct)
    for label, samples in (("direct SDK call", direct), ("through the bridge", bridged)):
        print(
            f"{label:>20}: p50 {_quantile(samples, 0.5) * 1e3:6.3f} ms"
            f"  p99 {_quantile(samples, 0.99) * 1e3:6.3f} ms  ({len(samples)} calls)"
        )
    verdict = "ok" if ratio <= GOAL else "over the goal"
    print(f"bridge p50 / direct p50: {ratio:.2f}x (goal <= {GOAL}x: {verdict})")


async def _verdict_s(handler: AppHandler) -> float:
    """One witness verdict, from the moment it is asked (as a task of its own, so it waits for
    the loop like a link frame would) to its answer."""
    request = ChatRequest(player=WITNESS, granted=["mineclaw.command.chat"], text="nice weather")
    started = time.perf_counter()
    verdict = await asyncio.get_running_loop().create_task(handler.on_chat(request))
    assert verdict.decision == "pass", verdict
    return time.perf_counter() - started


async def witness() -> None:
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "config"
        init_config_dir(config)
        settings = yaml.safe_load((config / "config.yml").read_text()) or {}
        settings["environment"] = {"tool_cooldown_ms": 0}  # the same player calls again
        settings["mcp"] = {
            "enabled": True,
            "servers": {
                "bench": {
                    "transport": "stdio",
                    "command": sys.executable,
                    "args": [SERVER],
                    "read": [str(Path(SERVER).parent)],
                }
            },
        }
        (config / "config.yml").write_text(yaml.safe_dump(settings))
        runtime = Runtime.open(config, environ={})
        handler = AppHandler(runtime)
        changed = asyncio.Event()
        runtime.mcp.add_listener(changed.set)
        try:
            async with asyncio.timeout(60):
                while runtime.mcp.connections["bench"].state is not State.READY:
                    changed.clear()
                    await changed.wait()
            invoker = runtime.served.invoker(frozenset())
            for label, tool, arguments, expected in HOSTILE:
                idle: list[float] = []
                busy: list[float] = []
                for round_ in range(WITNESS_ROUNDS):
                    for _ in range(WITNESS_IDLE_SAMPLES):
                        idle.append(await _verdict_s(handler))
                        await asyncio.sleep(0.001)
                    context = CallContext("bench", f"{tool}{round_}", "uuid", "Steve")
                    call = asyncio.create_task(
                        invoker.invoke(f"mcp__bench__{tool}", arguments, context)
                    )
                    while not call.done():
                        busy.append(await _verdict_s(handler))
                        await asyncio.sleep(0.001)
                    outcome = await call
                    assert outcome.error_code == expected, outcome
                _witnessed(label, idle, busy)
        finally:
            await runtime.aclose()


def _witnessed(label: str, idle: list[float], busy: list[float]) -> None:
    ratio = statistics.median(busy) / statistics.median(idle)
    for name, samples in (("idle server", idle), (label, busy)):
        print(
            f"{'witness verdict, ' + name:>41}: p50 {_quantile(samples, 0.5) * 1e3:6.3f} ms"
            f"  p99 {_quantile(samples, 0.99) * 1e3:6.3f} ms  ({len(samples)} verdicts)"
        )
    verdict = "ok" if ratio <= WITNESS_GOAL else "over the goal"
    print(f"witness p50 {label} / idle: {ratio:.2f}x (goal <= {WITNESS_GOAL}x: {verdict})")


async def both() -> None:
    await main()
    await witness()


if __name__ == "__main__":
    asyncio.run(both())
