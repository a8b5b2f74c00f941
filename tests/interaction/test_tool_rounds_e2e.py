"""Tools of one model reply, end to end: the testkit JVM, ``python -m bridge serve`` and a
scripted provider. "Set day and clear the weather" is two ``run_command`` calls in one reply;
both reach the server, in order, while the per-tool cooldown still spaces turns."""

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
# A cooldown far longer than the test: only the calls of one reply may share it.
LONG_TOOL_COOLDOWN = NO_COOLDOWNS + "environment:\n  tool_cooldown_ms: 600000\n"


async def test_two_commands_in_one_reply_both_run_and_the_cooldown_spaces_turns(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, LONG_TOOL_COOLDOWN, {"whitelist.yml": WHITELIST}) as w:
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

        # The next turn's call comes inside the cooldown: refused, nothing dispatched.
        w.provider.call_tools(
            ("run_command", {"command": "time set night", "intent": "night", "player": ""})
        )
        w.provider.answer("Not yet.")
        since = w.mark()
        await w.chat("Steve", "@ai now make it night")
        await w.message("*", REPLY_PREFIX, since)
        assert not [e for e in w.testkit.events[since:] if e.get("event") == "dispatch"]
        refused = [m for m in w.provider.bodies()[3]["messages"] if m["role"] == "tool"][-1]
        assert json.loads(refused["content"])["error_code"] == "cooldown"
