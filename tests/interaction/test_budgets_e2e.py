"""Token budgets, guests and the loop breaker end to end: the testkit JVM (the real plugin core),
the bridge (``python -m bridge serve``) and a scripted provider that reports usage.

The budgets' clock is the file named by ``MINECLAW_CLOCK_FILE``: a test moves the running
bridge past midnight by rewriting it. Tiers reach the bridge the way they do on a server: the
bridge names them in ``link.state``, the plugin reads each ``mineclaw.budget.<tier>`` node and
reports the ones a player holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from .processes import BridgeProcess, TestkitProcess
from .test_lanes_e2e import ask
from .test_turns_e2e import REPLY_PREFIX, World, asked_by, user_texts, world

pytestmark = pytest.mark.jvm

# A budget refuses a request that would pass it by the bridge's estimate of that request (a few
# hundred tokens here: instructions, skills index, history). The scripted usage keeps clear of
# that: the first turns stay far below the limits and the tool rounds reach them exactly.

CHAT = "mineclaw.command.chat"
MEMBER = [CHAT, "mineclaw.budget.member", "mineclaw.tool.run_command"]
BEFORE_MIDNIGHT = "2026-12-03T23:50:00+00:00"
AFTER_MIDNIGHT = "2026-12-04T00:00:30+00:00"
TOOLS_YML = """schema: 1
tools:
  list:
    handler: list
    description: List files in the workspace folder.
    parameters: {type: object, properties: {path: {type: string}}, additionalProperties: false}
  read:
    handler: read
    description: Read a text file from the workspace folder.
    parameters:
      type: object
      properties: {path: {type: string, minLength: 1}}
      required: [path]
      additionalProperties: false
  search:
    handler: grep
    description: Search the workspace (an external index; costs money per call).
    cost: paid
    parameters: {type: object, properties: {pattern: {type: string}}, required: [pattern]}
  run_command:
    handler: run_command
    description: Run a Minecraft command.
    permission: mineclaw.tool.run_command
    parameters:
      type: object
      properties: {command: {type: string}, intent: {type: string}, player: {type: string}}
      required: [command, intent, player]
      additionalProperties: false
"""


def config_yml(budgets: str, turn: str = "") -> str:
    return (
        "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
        + turn
        + budgets
    )


@contextlib.asynccontextmanager
async def budget_world(tmp_path: Path, config: str) -> AsyncIterator[tuple[World, Path]]:
    """A world whose bridge reads its budgets' clock from a file (returned with it)."""
    clock = tmp_path / "now.txt"
    clock.write_text(BEFORE_MIDNIGHT)
    env = {"MINECLAW_CLOCK_FILE": str(clock)}
    async with world(tmp_path, config, {"tools.yml": TOOLS_YML}, bridge_env=env) as current:
        await current.testkit.wait_event(lambda e: e.get("event") == "link.state")
        yield current, clock


async def refused_with(w: World, player: str, text: str) -> str:
    outcome = await w.chat(player, text)
    assert outcome["outcome"] != "public", outcome
    notices = [e["text"] for e in w.messages() if e.get("to") == player]
    return notices[-1]


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools", [])]


async def test_a_players_daily_budget_stops_a_turn_refuses_the_next_survives_kill_9_and_resets(
    tmp_path: Path,
) -> None:
    budgets = "budgets:\n  enabled: true\n  tiers:\n    member: {day_tokens: 10000}\n"
    async with budget_world(tmp_path, config_yml(budgets)) as (w, clock):
        await w.add("Steve", MEMBER)
        w.provider.answer("First answer.", usage=(10, 590))
        since = w.mark()
        assert (await w.chat("Steve", "@ai first question"))["outcome"] == "public"
        await w.message("*", asked_by("Steve") + "First answer.", since)

        # One tool round brings Steve to 10000 of 10000: the next request would pass the budget,
        # so it is never sent and the turn ends without a reply or a trace in the session.
        w.provider.call_tools(("list", {}), usage=(10, 9390))
        since = w.mark()
        await w.chat("Steve", "@ai second question")
        stopped = await w.message("Steve", "The answer was stopped", since)
        assert "daily assistant budget (10000 of 10000 tokens used)" in stopped
        assert "resets 2026-12-04 00:00 UTC" in stopped
        assert len(w.provider.requests) == 2
        assert not [m for m in w.messages(since) if m["text"].startswith(REPLY_PREFIX)]
        status = " | ".join(await w.command("Steve", "status"))
        assert "session: 1 turns" in status

        notice = await refused_with(w, "Steve", "@ai third question")
        assert "You have used your daily assistant budget (10000 of 10000 tokens)" in notice
        assert "it resets 2026-12-04 00:00 UTC" in notice
        assert len(w.provider.requests) == 2
        usage = " | ".join(await w.command("Steve", "usage"))
        assert "Steve (member): today 10000 of 10000" in usage

        # kill -9: the usage was committed with each response, so the restarted bridge
        # refuses just the same.
        await w.testkit.shutdown()
        w.bridge.process.kill()
        await w.bridge.kill()
        env = {"MINECLAW_CLOCK_FILE": str(clock)}
        w.bridge = await BridgeProcess.start(w.config, port=w.port, env=env)
        w.testkit = await TestkitProcess.start(w.bridge.url, w.bridge.token_file)
        await w.testkit.wait_event(lambda e: e.get("event") == "link.state")
        await w.add("Steve", MEMBER)
        notice = await refused_with(w, "Steve", "@ai after the restart")
        assert "(10000 of 10000 tokens)" in notice
        assert len(w.provider.requests) == 2

        # Midnight (the injected clock): a new day, a fresh budget.
        clock.write_text(AFTER_MIDNIGHT)
        w.provider.answer("A new day.", usage=(100, 5))
        since = w.mark()
        assert (await w.chat("Steve", "@ai good morning"))["outcome"] == "public"
        await w.message("*", asked_by("Steve") + "A new day.", since)
        assert user_texts(w.provider.bodies()[-1])[-1] == "good morning"
        usage = " | ".join(await w.command("Steve", "usage"))
        assert "today 105 of 10000" in usage and "this month 10105" in usage


async def test_the_server_budget_counts_everyone_and_a_guest_gets_less(tmp_path: Path) -> None:
    budgets = (
        "budgets:\n  enabled: true\n  server: {day_tokens: 10000}\n"
        "  guest: {day_tokens: 50000, max_output_tokens: 77, max_tool_rounds: 1}\n"
        "  tiers:\n    member: {}\n"
    )
    async with budget_world(tmp_path, config_yml(budgets)) as (w, clock):
        await w.add("Steve", MEMBER)
        # Alex may ask the agent to run commands, but as a guest is not offered run_command
        # (a side effect) nor the paid search, and gets the smaller output cap.
        await w.add("Alex", [CHAT, "mineclaw.tool.run_command"])
        w.provider.answer("Hello guest.", usage=(10, 5990))
        since = w.mark()
        assert (await w.chat("Alex", "@ai what can you do"))["outcome"] == "public"
        await w.message("*", asked_by("Alex") + "Hello guest.", since)
        guest_body = w.provider.bodies()[-1]
        assert guest_body["max_completion_tokens"] == 77
        assert tool_names(guest_body) == ["list", "read"]

        # Steve (a member) is offered everything and the model's own cap; his tool round
        # brings the server to 10000 of 10000, so his turn stops before its next request.
        w.provider.call_tools(("list", {}), usage=(10, 3990))
        since = w.mark()
        await w.chat("Steve", "@ai look around")
        stopped = await w.message("Steve", "The answer was stopped", since)
        assert "the server's daily assistant budget (10000 of 10000 tokens used)" in stopped
        member_body = w.provider.bodies()[-1]
        assert member_body["max_completion_tokens"] == 1000
        assert tool_names(member_body) == ["list", "read", "search", "run_command"]
        assert len(w.provider.requests) == 2

        for player in ("Alex", "Steve"):
            notice = await refused_with(w, player, "@ai anything")
            assert "The server has used its daily assistant budget (10000 of 10000" in notice
        assert len(w.provider.requests) == 2

        # Another player's usage needs mineclaw.usage.others.
        assert "may not see" in " | ".join(await w.command("Alex", "usage", "Steve"))
        await w.add("Op", [CHAT, "mineclaw.usage.others"])
        shown = " | ".join(await w.command("Op", "usage", "steve"))
        assert "Steve (tier not known until they ask again): today 4000" in shown
        assert "server: today 10000 of 10000" in shown

        clock.write_text(AFTER_MIDNIGHT)
        w.provider.answer("Back again.", usage=(10, 2))
        since = w.mark()
        assert (await w.chat("Alex", "@ai hello again"))["outcome"] == "public"
        await w.message("*", asked_by("Alex") + "Back again.", since)


async def test_a_guest_calling_a_tool_it_was_not_offered_is_refused(tmp_path: Path) -> None:
    budgets = "budgets:\n  enabled: true\n  guest: {max_tool_rounds: 2}\n  tiers:\n    member: {}\n"
    async with budget_world(tmp_path, config_yml(budgets)) as (w, _):
        await w.add("Alex", [CHAT, "mineclaw.tool.run_command"])
        # The model names a tool the guest was never offered: it is answered like a tool
        # that does not exist, and nothing is dispatched.
        w.provider.call_tools(
            ("run_command", {"command": "time set day", "intent": "x", "player": ""})
        )
        w.provider.answer("I cannot do that.")
        since = w.mark()
        await w.chat("Alex", "@ai make it day")
        await w.message("*", asked_by("Alex") + "I cannot do that.", since)
        results = [m for m in w.provider.bodies()[-1]["messages"] if m["role"] == "tool"]
        assert len(results) == 1 and '"error_code": "unknown_tool"' in results[0]["content"]
        assert not [e for e in w.testkit.events if e.get("event") == "dispatch"]


async def test_the_loop_breaker_stops_repeated_calls_and_rounds_that_keep_failing(
    tmp_path: Path,
) -> None:
    turn = "turn:\n  max_failing_rounds: 2\n  max_repeated_calls: 2\n"
    async with budget_world(tmp_path, config_yml("", turn)) as (w, _):
        await w.add("Steve", MEMBER)
        w.provider.call_tools(("list", {"path": ""}))
        w.provider.call_tools(("list", {"path": ""}))
        since = w.mark()
        await w.chat("Steve", "@ai find my notes")
        line = await w.message("Steve", "I stopped", since)
        assert "calling list with the same arguments over and over (2 times)" in line
        assert len(w.provider.requests) == 2

        w.provider.call_tools(("read", {"path": "missing.txt"}))
        w.provider.call_tools(("read", {"path": "also-missing.txt"}))
        since = w.mark()
        await w.chat("Steve", "@ai read my diary")
        line = await w.message("Steve", "I stopped", since)
        assert "my tool calls failed 2 rounds in a row" in line
        assert len(w.provider.requests) == 4
        # Neither stopped turn entered the session.
        assert "session: 0 turns" in " | ".join(await w.command("Steve", "status"))


async def test_a_guests_stopped_private_answers_are_counted_and_refuse_the_next(
    tmp_path: Path,
) -> None:
    # A guest asks privately three times and stops each answer while it streams: the provider
    # served every request, so each is counted (estimated) in the guest's and the server's
    # budget and the metrics, and once the guest's budget cannot hold another, he is refused.
    budgets = "budgets:\n  enabled: true\n  guest: {day_tokens: 2500, max_output_tokens: 200}\n"
    async with budget_world(tmp_path, config_yml(budgets)) as (w, _clock):
        await w.add("Alex", [CHAT, "mineclaw.command.private"])
        used: list[int] = []
        for n in range(3):
            held = w.provider.held("Once upon a time " * 40)
            await ask(w, "Alex", f"tell me story {n}")
            await asyncio.wait_for(held.streaming.wait(), 30)
            assert any("Stopped" in line for line in await ask(w, "Alex", "stop"))
            shown = " | ".join(await w.command("Alex", "usage"))
            match = re.search(r"Alex \(guest\): today (\d+) of 2500", shown)
            assert match is not None, shown
            used.append(int(match.group(1)))
        assert 0 < used[0] < used[1] < used[2], used
        assert len(w.provider.requests) == 3
        # A request reserves its prompt and the guest's cap (200) before it is sent: after
        # three stopped ones the rest of 2500 cannot hold a fourth, which is never sent.
        since = w.mark()
        await ask(w, "Alex", "one more")
        refused = await w.message("Alex", "assistant budget", since)
        assert "of 2500" in refused
        assert len(w.provider.requests) == 3


async def test_answers_that_broke_after_streaming_are_counted(tmp_path: Path) -> None:
    # Three attempts stream part of an answer and lose the connection: the turn fails, but the
    # provider served (and bills) each of them, so the asker's and the server's usage grow.
    budgets = "budgets:\n  enabled: true\n  tiers:\n    member: {day_tokens: 100000}\n"
    async with budget_world(tmp_path, config_yml(budgets)) as (w, _clock):
        await w.add("Steve", MEMBER)
        w.provider.break_after("The answer is ", "almost here " * 50, times=3)
        since = w.mark()
        assert (await w.chat("Steve", "@ai a question"))["outcome"] == "public"
        await w.message("Steve", "provider is busy", since)  # once the attempts are spent
        assert len(w.provider.requests) == 3
        shown = " | ".join(await w.command("Steve", "usage"))
        match = re.search(r"Steve \(member\): today (\d+) of 100000", shown)
        assert match is not None and int(match.group(1)) > 3 * 150, shown
        assert "estimated" in shown
