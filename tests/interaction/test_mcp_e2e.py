"""An MCP server's tool end to end: the testkit JVM, ``python -m bridge serve`` with a stdio MCP
server (the toolbox of tests/mcp_client, written with the official SDK) and a scripted provider.
A member's turn calls the tool and answers from its result; a guest (a lower tier: budgets on,
no tier node) is never offered it, and naming it anyway is answered like a tool that does not
exist."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.mcp_client.harness import TOOLBOX

from .test_ask_player_e2e import stopped_audit
from .test_turns_e2e import NO_COOLDOWNS, REPLY_PREFIX, asked_by, world

pytestmark = pytest.mark.jvm

CHAT = "mineclaw.command.chat"
MEMBER = [CHAT, "mineclaw.budget.member"]
READY = r"MCP server wiki ready: (\d+) tools offered"


def config_yml() -> str:
    config = yaml.safe_load(NO_COOLDOWNS)
    config["environment"] = {"tool_cooldown_ms": 0}
    config["budgets"] = {"enabled": True, "tiers": {"member": {"day_tokens": 1_000_000}}}
    config["mcp"] = {
        "enabled": True,
        "servers": {
            "wiki": {
                "transport": "stdio",
                "command": sys.executable,
                "args": [TOOLBOX],
                "read": [str(Path(TOOLBOX).parent)],
            }
        },
    }
    return yaml.safe_dump(config)


def tool_outcomes(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]


def offered(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools", [])]


async def test_a_member_calls_an_mcp_tool_and_a_guest_never_sees_it(tmp_path: Path) -> None:
    async with world(tmp_path, config_yml()) as w:
        await w.bridge.stderr.wait_for(READY, timeout=120)
        await w.add("Steve", MEMBER)
        await w.add("Alex", [CHAT])  # no tier: a guest

        w.provider.call_tools(("mcp__wiki__echo", {"text": "the spawn is at 0 64 0"}))
        w.provider.answer("The wiki says the spawn is at 0 64 0.")
        since = w.mark()
        await w.chat("Steve", "@ai where is the spawn? ask the wiki")
        # An MCP server's result is personal unless the owner marks it shared: the answer
        # that carries it reaches its asker alone.
        assert (await w.message("Steve", "→ you]", since)).endswith(
            "The wiki says the spawn is at 0 64 0."
        )
        first, second = w.provider.bodies()
        assert "mcp__wiki__echo" in offered(first)
        [result] = tool_outcomes(second)
        assert result["ok"] is True and "the spawn is at 0 64 0" in result["result"]["text"]
        assert result["result"]["text"].startswith("[MCP result ")

        # The guest: not offered, and a call naming it anyway is refused as unknown.
        w.provider.call_tools(("mcp__wiki__echo", {"text": "guest"}))
        w.provider.answer("I cannot ask the wiki.")
        since = w.mark()
        await w.chat("Alex", "@ai ask the wiki")
        assert (
            await w.message("*", REPLY_PREFIX, since) == asked_by("Alex") + "I cannot ask the wiki."
        )
        guest_first, guest_second = w.provider.bodies()[2:]
        assert not [name for name in offered(guest_first) if name.startswith("mcp__")]
        [refused] = tool_outcomes(guest_second)[-1:]
        assert refused["ok"] is False and refused["error_code"] == "unknown_tool"
        logged = await stopped_audit(w)
    calls = logged["mcp.call"]
    assert [(c["player"], c["tool"], c["status"]) for c in calls] == [("Steve", "echo", "ok")]
