"""Tools of one model reply, end to end: the testkit JVM, ``python -m bridge serve`` and a
scripted provider. "Set day and clear the weather" is two ``run_command`` calls in one reply;
both reach the server, in order, under the default per-tool cooldown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_turns_e2e import NO_COOLDOWNS, OP, REPLY_PREFIX, world

pytestmark = pytest.mark.jvm

WHITELIST = """schema: 1
enabled: true
player: []
console:
  - "time set (day|night)"
  - "weather (clear|rain)"
"""
COMMANDER = [*OP, "mineclaw.tool.run_command"]


async def test_two_commands_in_one_reply_both_run_under_the_default_cooldown(
    tmp_path: Path,
) -> None:
    # The rate limits are off so the turn starts; tool_cooldown_ms keeps its default (500).
    async with world(tmp_path, NO_COOLDOWNS, {"whitelist.yml": WHITELIST}) as w:
        await w.add("Steve", COMMANDER)
        w.provider.call_tools(
            ("run_command", {"command": "time set day", "intent": "day", "player": ""}),
            ("run_command", {"command": "weather clear", "intent": "sun", "player": ""}),
        )
        w.provider.answer("Day and clear skies.")
        since = w.mark()
        await w.chat("Steve", "@ai set day and clear weather")
        await w.message("*", REPLY_PREFIX, since)
        dispatched = [
            e["command"] for e in w.testkit.events[since:] if e.get("event") == "dispatch"
        ]
        assert dispatched == ["time set day", "weather clear"]
        second = w.provider.bodies()[1]
        results = [m for m in second["messages"] if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in results] == ["call_0", "call_1"]
        for message in results:
            outcome = json.loads(message["content"])
            assert outcome["ok"] is True and outcome["result"]["status"] == "dispatched"
