"""Helpers for the Function runtime tests: catalogue entries, a scripted host, a heartbeat."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionsFile
from bridge.functions.engine import Engine
from bridge.functions.host import (
    ApprovalAnswer,
    ApprovalInput,
    DispatchInput,
    DispatchOutcome,
    InvocationInfo,
    NativeToolInput,
    NativeToolOutcome,
    OperationRefused,
)
from bridge.functions.runtime import FunctionRuntime
from bridge.functions.suspensions import Suspension, Suspensions
from bridge.store.audit_sink import MemoryAudit

# Every wait in these tests is bounded by this; a healthy run never comes near it.
WAIT_S = 30.0
ONLINE = "Steve"


def function(
    source: str,
    *,
    name: str = "f",
    capabilities: list[str] | None = None,
    parameters: dict[str, Any] | None = None,
    enabled: bool = True,
) -> dict[str, Any]:
    return {
        "name": name,
        "description": "a test Function",
        "enabled": enabled,
        "capabilities": capabilities or [],
        "parameters": parameters or {"type": "object"},
        "on_call": source,
    }


def body(js: str) -> str:
    """An onCall whose body is `js`."""
    return "async function onCall(ctx, api) {\n" + js + "\n}"


@dataclass
class ScriptedHost:
    """A host whose answers the test chooses; it records every call and every cancellation."""

    tools: set[str] = field(default_factory=lambda: {"echo", "boom"})
    approval_status: str = "approved"
    block_approvals: bool = False
    calls: list[tuple[str, Any]] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    approval_started: asyncio.Event = field(default_factory=asyncio.Event)
    invocations: list[InvocationInfo] = field(default_factory=list)

    def is_registered_tool(self, name: str) -> bool:
        return name in self.tools

    async def request_approval(
        self, request: ApprovalInput, invocation: InvocationInfo
    ) -> ApprovalAnswer:
        self.calls.append(("approval", request))
        if request.player != ONLINE:
            raise OperationRefused("player_offline", f"{request.player} is not online")
        self.approval_started.set()
        if self.block_approvals:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled.append("approval")
                raise
        choice = request.interaction.options[0].id if request.interaction.options else None
        return ApprovalAnswer(
            approval_status=self.approval_status,  # type: ignore[arg-type]
            choice=choice,
            player=request.player,
        )

    async def dispatch_command(
        self, request: DispatchInput, invocation: InvocationInfo
    ) -> DispatchOutcome:
        self.calls.append(("dispatch", request))
        self.invocations.append(invocation)
        return DispatchOutcome(
            dispatch_status="dispatched",
            execution_result="success",
            feedback=[f"ran {request.command}"],
            executor=request.executor,
            player=request.player,
        )

    async def call_native_tool(
        self, request: NativeToolInput, invocation: InvocationInfo
    ) -> NativeToolOutcome:
        self.calls.append(("native", request))
        if request.tool == "boom":
            raise RuntimeError("handler crashed with a secret detail")
        return NativeToolOutcome(operation_status="completed", output={"echo": request.arguments})


def runtime(
    engine: Engine,
    *functions: dict[str, Any],
    limits: FunctionLimits | None = None,
    host: ScriptedHost | None = None,
    suspensions: Suspensions | None = None,
    on_suspended: Callable[[Suspension], None] | None = None,
) -> tuple[FunctionRuntime, ScriptedHost, MemoryAudit]:
    catalogue = FunctionsFile.model_validate(
        {"schema": 1, "api_version": 1, "functions": list(functions)}
    )
    host = host or ScriptedHost()
    audit = MemoryAudit()
    built = FunctionRuntime(
        catalogue=catalogue,
        limits=limits or FunctionLimits(),
        engine=engine,
        host=host,
        audit=audit,
        suspensions=suspensions,
        on_suspended=on_suspended,
    )
    return built, host, audit


class Heartbeat:
    """Ticks every millisecond on the test's event loop and records the largest gap."""

    def __init__(self) -> None:
        self.ticks = 0
        self.largest_gap = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _beat(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(0.001)
            self.largest_gap = max(self.largest_gap, loop.time() - before)
            self.ticks += 1

    async def __aenter__(self) -> Heartbeat:
        self._task = asyncio.get_running_loop().create_task(self._beat())
        await asyncio.sleep(0)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._task is not None
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass


def output(result: dict[str, Any]) -> dict[str, Any]:
    out = result["output"]
    assert isinstance(out, dict)
    return out
