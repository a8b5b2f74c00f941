"""The two-person rule end to end: a console command under ``whitelist.yml`` ``console_confirm``
runs only after a second player holding ``mineclaw.approve.console``, not the requester,
accepts the exact command. A real LinkServer in this process, the testkit JVM linked to it,
buttons "clicked" by running ``/mineclaw approve|deny <token>`` as that player, which reaches
the bridge as a command request carrying the clicker's permission facts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bridge.link.messages import PlayerRef

from .processes import EVENT_TIMEOUT
from .test_tools_e2e import STEVE, World, world

pytestmark = pytest.mark.jvm

WHITELIST = """schema: 1
enabled: true
console:
  - "time set (day|night)"
  - {rule: "ban [A-Za-z0-9_]{3,16}", allow_never: true}
console_confirm:
  - {rule: "ban [A-Za-z0-9_]{3,16}", allow_never: true}
"""
CAROL = PlayerRef(uuid="7d2e4f6a-1b3c-4d5e-9f80-a1b2c3d4e5f6", name="Carol")
CONSOLE_APPROVER = ["mineclaw.command.approve", "mineclaw.approve.console"]


def ban(approver: str, target: str = "Griefer") -> dict[str, Any]:
    return {"command": f"ban {target}", "intent": "griefing", "player": "", "approver": approver}


async def add_carol(w: World) -> None:
    await w.testkit.send(
        {"op": "player.add", "name": "Carol", "uuid": CAROL.uuid, "permissions": CONSOLE_APPROVER}
    )
    assert await asyncio.wait_for(w.handler.joined.get(), EVENT_TIMEOUT) == "Carol"


async def prompted(w: World, arguments: dict[str, Any], to: str) -> tuple[asyncio.Task[Any], str]:
    """Starts Steve's call; returns it and the token of the prompt ``to`` is shown."""
    since = len(w.testkit.events)
    call = asyncio.create_task(w.call("run_command", arguments))
    shown = asyncio.create_task(
        w.testkit.wait_event(
            lambda e: e.get("event") == "approval" and e.get("to") == to, since=since
        )
    )
    done, _ = await asyncio.wait(
        {call, shown}, timeout=EVENT_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
    )
    if shown not in done:
        shown.cancel()
        pytest.fail(f"{to} was shown no prompt; the call: {call.result() if call in done else '-'}")
    event = shown.result()
    [accept] = [b for b in event["buttons"] if b["command"].startswith("/mineclaw approve ")]
    token: str = accept["command"].split(" ")[2]
    assert "ban Griefer" in event["text"] and "Steve" in event["text"]
    return call, token


def decisions(w: World) -> list[dict[str, Any]]:
    return [fields for kind, fields in w.audit.events if kind == "run_command.decision"]


async def test_a_second_approver_confirms_and_the_command_runs_once_with_both_audited(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, whitelist=WHITELIST) as w:
        await add_carol(w)
        call, token = await prompted(w, ban("Carol"), to="Carol")
        assert w.dispatches() == []  # nothing runs before the second person says yes
        lines = await w.command("Carol", "approve", token, ref="a1")
        assert any("Accepted" in line for line in lines)
        result = (await asyncio.wait_for(call, EVENT_TIMEOUT))["result"]
        assert result["status"] == "dispatched" and result["executor"] == "console"
        await w.dispatch_seen("ban Griefer")
        [dispatch] = w.dispatches()
        assert dispatch["command"] == "ban Griefer"
        [record] = [d for d in decisions(w) if d["status"] == "dispatched"]
        assert record["requester"] == "Steve" and record["approver"] == "Carol"
        assert record["confirmed"] is True
        # Replay: the same click again finds nothing, and nothing runs a second time.
        again = await w.command("Carol", "approve", token, ref="a2")
        assert again and not any("Accepted" in line for line in again)
        assert len(w.dispatches()) == 1


async def test_the_requester_can_never_approve_their_own_command(tmp_path: Path) -> None:
    async with world(tmp_path, whitelist=WHITELIST) as w:
        await add_carol(w)
        # Named as their own approver: refused before anyone is asked.
        own = (await w.call("run_command", ban("Steve")))["result"]
        assert own["status"] == "refused" and "own command" in own["reason"]
        # Without an approver: refused, saying what is needed (the console rule alone is not
        # enough for a command the two-person rule covers).
        none = (await w.call("run_command", ban("")))["result"]
        assert none["status"] == "refused" and "second player" in none["reason"]
        # Steve clicking the token shown to Carol is refused; Carol's prompt stays open.
        call, token = await prompted(w, ban("Carol"), to="Carol")
        stolen = await w.command("Steve", "approve", token, ref="s1")
        assert stolen and not any("Accepted" in line for line in stolen)
        assert w.dispatches() == []
        await w.command("Carol", "deny", token, ref="c1")
        result = (await asyncio.wait_for(call, EVENT_TIMEOUT))["result"]
        assert result["status"] == "denied" and w.dispatches() == []


async def test_an_approver_without_the_permission_cannot_confirm(tmp_path: Path) -> None:
    async with world(tmp_path, whitelist=WHITELIST) as w:
        call, token = await prompted(w, ban("Alex"), to="Alex")  # Alex lacks approve.console
        lines = await w.command("Alex", "approve", token, ref="x1")
        assert any("mineclaw.approve.console" in line for line in lines)
        result = (await asyncio.wait_for(call, EVENT_TIMEOUT))["result"]
        assert result["status"] == "refused" and "mineclaw.approve.console" in result["reason"]
        assert w.dispatches() == []


async def test_an_unanswered_second_confirmation_times_out_and_its_token_dies(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, whitelist=WHITELIST, confirmation_timeout_s=1.0) as w:
        await add_carol(w)
        call, token = await prompted(w, ban("Carol"), to="Carol")
        result = (await asyncio.wait_for(call, EVENT_TIMEOUT))["result"]
        assert result["status"] == "timed_out"
        late = await w.command("Carol", "approve", token, ref="t1")
        assert late and not any("Accepted" in line for line in late)
        assert w.dispatches() == []


async def test_commands_outside_the_rule_still_run_without_a_second_person(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, whitelist=WHITELIST) as w:
        plain = {"command": "time set day", "intent": "light", "player": "", "approver": ""}
        result = (await w.call("run_command", plain, player=STEVE))["result"]
        assert result["status"] == "dispatched"
