"""``approval.answer`` records the command redacted, like the run_command decision record of
the same call; the wiring is the app's (LinkTools over the real control plane)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bridge.control import init_config_dir, load_control_plane
from bridge.control.messages_file import ApprovalMessages
from bridge.link.messages import CommandRequest, CommandSender
from bridge.policy.approvals import Subject, confirmation_prompt
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.link_tools import LinkTools, PlaneWhitelist

from .test_approvals import ALEX, WAIT, Prompts

RCON = "Zq8Wm3Xv7Lt2"


async def test_the_answer_is_audited_with_the_command_redacted(tmp_path: Path) -> None:
    init_config_dir(tmp_path)
    (tmp_path / ".env").write_text(f"RCON_PASSWORD={RCON}\n")
    plane = load_control_plane(tmp_path, environ={})
    audit = MemoryAudit()
    tools = LinkTools(served=lambda: PlaneWhitelist.of(plane), audit=audit)
    command = f"rcon-cli --password {RCON} give Alex minecraft:diamond 1"
    subject = Subject("command", ALEX.uuid, command)
    prompt, buttons, display = confirmation_prompt(
        ApprovalMessages(),
        requester="Steve",
        target="Alex",
        command=command,
        intent="a gift",
        assistant="Mineclaw",
    )
    prompts = Prompts()
    task = asyncio.create_task(
        tools.broker.request(
            prompts.link,
            target=ALEX,
            subject=subject,
            prompt=prompt,
            buttons=buttons,
            timeout_s=60.0,
            display=display,
        )
    )
    await asyncio.wait_for(prompts.up.wait(), WAIT)
    granted: list[Any] = ["mineclaw.command.approve"]
    sender = CommandSender(kind="player", player=ALEX, granted=granted)
    lines = await tools.approval_handler(
        CommandRequest(sender=sender, args=["approve", prompts.token])
    )
    assert lines
    assert (await asyncio.wait_for(task, WAIT)).approves(subject)
    [answer] = [fields for kind, fields in audit.events if kind == "approval.answer"]
    assert answer["verdict"] == "approved"
    assert RCON not in str(audit.events)
    assert answer["command"] == (
        "rcon-cli --password [redacted: configured secret] give Alex minecraft:diamond 1"
    )
