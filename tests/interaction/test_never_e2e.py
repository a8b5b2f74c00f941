"""The never list end to end, on the testkit JVM's command map: plugin aliases, labels the
bridge has never seen (registered while the test runs), wrappers that carry commands and
unknown labels are refused before any prompt or dispatch; a harmless alias is still asked."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from .processes import EVENT_TIMEOUT
from .test_tools_e2e import ALEX, World, world

pytestmark = pytest.mark.jvm

WHITELIST = """schema: 1
enabled: true
player:
  - "time query (day|daytime)"
console:
  - "time set (day|night)"
  - {rule: "[a-z:]+ .*", allow_never: true}
"""

# For Alex: a prompt would be the attack; each must be refused before it is shown.
REFUSED_FOR_ANOTHER_PLAYER = [
    "esudo Alex op Steve",
    "essentials:esudo Alex op Steve",
    "eban Griefer",
    "etempban Griefer 1d",
    "eeco give Steve 1000000",
    "perms user Steve permission set *",
    "pm unload LuckPerms",
    "cmi sudo Alex op Steve",
    "transfer evil.example 25565 @a",
    "return run op Steve",
    "minecraft:return run esudo Alex op Steve",
    "execute as @a run eban Griefer",
    'data merge block 1 64 2 {Command:"op Steve"}',
    'setblock 1 64 2 command_block{Command:"/eban Griefer"}',
    'summon command_block_minecart ~ ~ ~ {Command:"op Steve"}',
    "give Alex command_block",
    'tellraw Alex {"text":"x","clickEvent":{"action":"run_command","value":"/op Steve"}}',
    "nosuch Alex",
    "execute run nosuch Alex",
    "heal-all",
]


async def _no_prompt_no_dispatch(w: World, arguments: dict[str, Any]) -> dict[str, Any]:
    """Calls run_command; asserts nothing was shown or dispatched meanwhile."""
    since = len(w.testkit.events)
    result: dict[str, Any] = (await w.call("run_command", arguments))["result"]
    # The plugin answers in order: a ping after the call shows every event of the call arrived.
    await w.testkit.send({"op": "player.set", "name": "Steve", "ref": f"p{since}"})
    await w.testkit.wait_event(lambda e: e == {"event": "player.updated", "ref": f"p{since}"})
    seen = w.testkit.events[since:]
    assert [e for e in seen if e.get("event") in ("approval", "dispatch")] == [], seen
    return result


@pytest.mark.parametrize("command", REFUSED_FOR_ANOTHER_PLAYER)
async def test_refused_before_anyone_is_asked(tmp_path: Path, command: str) -> None:
    async with world(tmp_path, whitelist=WHITELIST) as w:
        result = await _no_prompt_no_dispatch(
            w, {"command": command, "intent": "help", "player": "Alex"}
        )
    assert result["status"] == "refused", result
    assert (
        "never list" in result["reason"]
        or "no command" in result["reason"]
        or ("cannot" in result["reason"])
    ), result


async def test_an_alias_the_bridge_never_saw_is_judged_as_its_command(tmp_path: Path) -> None:
    # The rule names no never-listed command, so validate accepts it; the server's answer for
    # the label (a tempban by its permission node) is what refuses it.
    whitelist = 'schema: 1\nconsole:\n  - "zq [A-Za-z]+ [0-9]+d"\n'
    async with world(tmp_path, whitelist=whitelist) as w:
        await w.testkit.send(
            {"op": "command.register", "name": "punish", "plugin": "Moderation",
             "aliases": ["zq"], "permission": "essentials.tempban", "ref": "r1"}
        )  # fmt: skip
        await w.testkit.wait_event(lambda e: e == {"event": "command.registered", "ref": "r1"})
        for player in ("Alex", ""):
            result = await _no_prompt_no_dispatch(
                w, {"command": "zq Griefer 7d", "intent": "help", "player": player}
            )
            assert result["status"] == "refused" and "essentials.tempban" in result["reason"]


async def test_unknown_labels_are_refused_even_by_an_opted_out_rule(tmp_path: Path) -> None:
    async with world(tmp_path, whitelist=WHITELIST) as w:
        for command in ("nosuch x", 'data merge block 1 64 2 {Command:"nosuch"}'):
            result = await _no_prompt_no_dispatch(
                w, {"command": command, "intent": "", "player": ""}
            )
            assert result["status"] == "refused" and "no command 'nosuch'" in result["reason"]


async def test_the_opt_out_reaches_the_command_it_names(tmp_path: Path) -> None:
    async with world(tmp_path, whitelist=WHITELIST) as w:
        arguments = {"command": "eban Griefer", "intent": "griefing", "player": ""}
        result = (await w.call("run_command", arguments))["result"]
        assert result["status"] == "dispatched", result
        await w.dispatch_seen("eban Griefer")


async def test_a_harmless_alias_is_still_asked(tmp_path: Path) -> None:
    async with world(tmp_path, whitelist=WHITELIST) as w:
        since = len(w.testkit.events)
        call = asyncio.create_task(
            w.call("run_command", {"command": "go Alex", "intent": "home", "player": "Alex"})
        )
        event = await w.testkit.wait_event(
            lambda e: e.get("event") == "approval" and e.get("to") == ALEX.name, since=since
        )
        [deny] = [b for b in event["buttons"] if b["command"].startswith("/mineclaw deny ")]
        await w.command("Alex", *deny["command"].split(" ")[1:], ref="deny")
        result = (await asyncio.wait_for(call, EVENT_TIMEOUT))["result"]
        assert result["status"] == "denied"


async def test_the_bridges_own_commands_are_never_run_for_the_model(tmp_path: Path) -> None:
    # Issue 44: run as another player (or the console), /mineclaw memory would read or forget
    # someone else's memories. The server knows the command as the Mineclaw plugin's.
    async with world(tmp_path, whitelist=WHITELIST) as w:
        await w.testkit.send(
            {"op": "command.register", "name": "mineclaw", "plugin": "Mineclaw",
             "aliases": ["mc"], "permission": "mineclaw.command.chat", "ref": "r1"}
        )  # fmt: skip
        await w.testkit.wait_event(lambda e: e == {"event": "command.registered", "ref": "r1"})
        for command in ("mineclaw memory list Steve", "mc memory forget all Steve"):
            result = await _no_prompt_no_dispatch(
                w, {"command": command, "intent": "help", "player": "Alex"}
            )
            assert result["status"] == "refused" and "never list" in result["reason"], result
