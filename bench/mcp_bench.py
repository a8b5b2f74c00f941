"""An MCP tool call through the bridge against the same call made directly with the SDK.

Run: ``python -m bench.mcp_bench``. Two copies of one stdio MCP server (``bench.mcp_echo_server``,
the official SDK's) run side by side: one behind the bridge's MCP client, called through the
one tool path a turn uses (the registry, argument validation against the server's schema, the
cooldown, the MCP call, the result cut and marked, redaction, both audit records), the other
called with the SDK's own ``Client`` directly. Rounds alternate between the two so a change in
the machine's load falls on both; each prints p50 and p99 and the bridge's p50 as a multiple of
the direct one (goal: at most 1.2x).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bridge.control.config_file import ConfigFile
from bridge.control.tools_file import ToolsFile
from bridge.mcp.clients import McpClients
from bridge.mcp.connection import State
from bridge.redaction import Redactor
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.registry import CallContext, ToolRegistry

SERVER = str(Path(__file__).with_name("mcp_echo_server.py"))
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
                    "bench": {"transport": "stdio", "command": sys.executable, "args": [SERVER]}
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
                for _ in range(CALLS_PER_ROUND):
                    started = time.perf_counter()
                    result = await direct_session.call_tool("echo", arguments)
                    direct.append(time.perf_counter() - started)
                    assert not result.is_error
                for index in range(CALLS_PER_ROUND):
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


if __name__ == "__main__":
    asyncio.run(main())
