"""A guest's tools: paid and side-effect tools are not offered, and refused again when called."""

from __future__ import annotations

from typing import Any

from bridge.app.serving.budget_binding import guest_admission
from bridge.control.budgets_config import GuestConfig
from bridge.control.tools_file import ToolsFile
from bridge.redaction import Redactor
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.registry import CallContext, ToolRegistry, TurnTools

PARAMS = {"type": "object", "properties": {}}
TOOLS = ToolsFile.model_validate(
    {
        "schema": 1,
        "tools": {
            "read": {"handler": "read", "description": "free", "parameters": PARAMS},
            "search": {
                "handler": "grep",
                "description": "paid",
                "cost": "paid",
                "parameters": PARAMS,
            },
            "run_command": {"handler": "run_command", "description": "d", "parameters": PARAMS},
        },
    }
)


async def _handler(arguments: dict[str, Any], context: CallContext) -> str:
    return "ran"


REGISTRY = ToolRegistry.from_tools_file(
    TOOLS, {name: _handler for name in ("read", "grep", "run_command")}
)
CONTEXT = CallContext(turn_id="t1", call_id="c1", player_uuid="u", player_name="Steve")


def _invoker(tools: TurnTools) -> ToolInvoker:
    return ToolInvoker(
        tools, cooldowns=Cooldowns(cooldown_ms=0), redactor=Redactor(), audit=MemoryAudit()
    )


async def test_a_guest_is_offered_only_free_tools_without_side_effects() -> None:
    guest = REGISTRY.for_player(frozenset(), admit=guest_admission(GuestConfig()))
    assert [spec.name for spec in guest.specs] == ["read"]
    member = REGISTRY.for_player(frozenset())
    assert [spec.name for spec in member.specs] == ["read", "search", "run_command"]
    allowed = REGISTRY.for_player(
        frozenset(), admit=guest_admission(GuestConfig(allow_tools=["search"]))
    )
    assert [spec.name for spec in allowed.specs] == ["read", "search"]


async def test_a_tool_a_guest_was_not_offered_is_refused_at_the_call() -> None:
    # A catalogue that still holds the tool (built before the check, or by other code): the
    # call itself asks again and answers as for a tool that is not there.
    full = REGISTRY.for_player(frozenset())
    guarded = TurnTools(full.specs, full.tools, admit=guest_admission(GuestConfig()))
    refused = await _invoker(guarded).invoke("search", "{}", CONTEXT)
    assert not refused.ok and refused.error_code == "unknown_tool"
    assert (await _invoker(guarded).invoke("read", "{}", CONTEXT)).ok
    assert (await _invoker(full).invoke("search", "{}", CONTEXT)).ok
