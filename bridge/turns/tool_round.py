"""One tool round of a turn: every call of one model reply run, results in call order.

Reads next to each other run together; a call with side effects runs alone, after everything
before it and before everything after it, so "set day, then clear the weather" happens in that
order. A call past the turn's ``max_tool_calls`` is answered with `TOOL_CALL_LIMIT_OUTPUT`
instead of being run. Every call is audited (``tool.call``, then ``tool.result`` or
``tool.failure``); a tool's error becomes its result, for the model to read.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from bridge.errors import MineclawError, ToolError
from bridge.providers.items import ToolCall, ToolResult
from bridge.store.audit_sink import AuditSink
from bridge.turns.ports import TurnContext, TurnOutput, TurnSnapshot
from bridge.turns.tool_status import TOOLS, tool_status
from bridge.turns.turn_progress import TurnProgress
from bridge.unicode_text import valid_text

log = logging.getLogger(__name__)

TOOL_CALL_LIMIT_OUTPUT = "error: this turn has used all the tool calls it may make"


async def show_tools(
    output: TurnOutput, context: TurnContext, snapshot: TurnSnapshot, calls: Sequence[ToolCall]
) -> None:
    """``◆ tool, tool ◆`` in the asker's action bar while a round's tools run."""
    shown = tool_status(calls, snapshot.tools, snapshot.limits.action_bar_max_chars)
    if not shown:
        return
    try:
        await output.action_bar_line(context.player, TOOLS, {"tools": shown})
    except MineclawError as exc:
        log.debug("tool status frame skipped: %s", exc)


async def run_round(
    context: TurnContext,
    snapshot: TurnSnapshot,
    calls: Sequence[ToolCall],
    progress: TurnProgress,
    audit: AuditSink,
) -> list[ToolResult]:
    """Every call of one model reply, results in call order (``progress.tool_calls`` counts
    the calls run)."""
    runner = snapshot.tool_runner
    assert runner is not None
    results: list[ToolResult | None] = [None] * len(calls)
    reads: list[int] = []

    async def run_reads() -> None:
        if len(reads) == 1:
            results[reads[0]] = await run_tool(context, snapshot, calls[reads[0]], audit)
        elif reads:
            # A task group: a fault in one read cancels the others and ends the turn.
            async with asyncio.TaskGroup() as group:
                tasks = {
                    index: group.create_task(run_tool(context, snapshot, calls[index], audit))
                    for index in reads
                }
            for index, task in tasks.items():
                results[index] = task.result()
        reads.clear()

    for index, call in enumerate(calls):
        if progress.tool_calls >= snapshot.limits.max_tool_calls:
            results[index] = ToolResult(call_id=call.call_id, output=TOOL_CALL_LIMIT_OUTPUT)
            continue
        progress.tool_calls += 1
        if runner.side_effect_free(call.name):
            reads.append(index)
            continue
        await run_reads()
        results[index] = await run_tool(context, snapshot, call, audit)
    await run_reads()
    return [result for result in results if result is not None]


async def run_tool(
    context: TurnContext, snapshot: TurnSnapshot, call: ToolCall, audit: AuditSink
) -> ToolResult:
    assert snapshot.tool_runner is not None
    base = {"turn_id": context.turn_id, "call_id": call.call_id, "name": call.name}
    audit.record("tool.call", dict(base))
    try:
        result = await snapshot.tool_runner.run(call, context)
    except ToolError as exc:
        audit.record("tool.failure", {**base, "reason": str(exc)})
        return ToolResult(call_id=call.call_id, output=valid_text(f"error: {exc}"))
    if result.call_id != call.call_id:
        result = result.model_copy(update={"call_id": call.call_id})
    # A tool's output enters the session here: a lone surrogate in it (a Function's string,
    # a file's name) would make every later request of the session fail to encode.
    output = valid_text(result.output)
    if output is not result.output:
        result = result.model_copy(update={"output": output})
    audit.record("tool.result", {**base, "output_chars": len(result.output)})
    return result
