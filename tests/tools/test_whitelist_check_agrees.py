"""``mineclaw-bridge whitelist check`` decides as the bridge would: the same command, through
the CLI and through run_command on a connected server, gets the same verdict (allow, deny, or a
second player's confirmation). The CLI once canonicalised twice, so ``//weather clear`` was
"allow" there while the bridge refused it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bridge.cli import main
from bridge.control.whitelist_file import WhitelistFile
from bridge.policy.whitelist import compile_whitelist
from bridge.redaction import Redactor
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.run_command import RunCommand

from .plugin_fakes import ALEX, STEVE, access, context
from .test_run_command_never import WAIT, Harness

RULES = {
    "schema": 1,
    "player": ["weather (clear|rain)", "time set day"],
    "console": ["weather .*", "gamerule [A-Za-z]+ (true|false)", "say [a-z ]+"],
    "console_confirm": ["gamerule keepInventory (true|false)"],
}
COMMANDS = [
    "weather clear",
    "/weather clear",
    "//weather clear",
    "WEATHER clear",
    "weather  clear",
    "weather clear ",
    "time set day",
    "op Steve",
    "gamerule keepInventory true",
    "/gamerule keepInventory true",
    "gamerule doDaylightCycle false",
    "say hello",
    "say §chello",
    "/",
]


def _cli_verdict(config: Path, executor: str, command: str, capsys: Any) -> str:
    code = main(["whitelist", "check", "--as", executor, "--config", str(config), "--", command])
    out = capsys.readouterr()
    text = out.out + out.err
    first = text.strip().splitlines()[0]
    if first.startswith("allow"):
        assert code == 0, text
        return "allow"
    if first.startswith(("ask a second player", "ask the player")):
        assert code == 0, text
        return "confirm"
    assert code != 0, text
    return "deny"


async def _bridge_verdict(executor: str, command: str) -> str:
    file = WhitelistFile.model_validate(RULES)
    harness = Harness(compile_whitelist(file), answer="deny")
    harness.tool = RunCommand(
        access(harness.link),
        harness.broker,
        whitelist=compile_whitelist(file),
        messages=harness.tool._messages,
        audit=MemoryAudit(),
        redactor=Redactor(),
    )
    player = "" if executor == "console" else STEVE.name
    arguments: dict[str, Any] = {"command": command, "player": player, "intent": "test"}
    if executor == "console":
        arguments["approver"] = ALEX.name
    result = await asyncio.wait_for(harness.tool.run(arguments, context(STEVE)), WAIT)
    if harness.shown:
        return "confirm"
    return "allow" if result["status"] == "dispatched" else "deny"


@pytest.mark.parametrize("executor", ["player", "console"])
async def test_the_check_and_the_bridge_give_the_same_verdict(
    executor: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    config = tmp_path / "config"
    main(["init", "--config", str(config)])
    (config / "whitelist.yml").write_text(yaml.safe_dump(RULES))
    capsys.readouterr()
    assert "problems" not in capsys.readouterr().out
    seen = {}
    for command in COMMANDS:
        cli = _cli_verdict(config, executor, command, capsys)
        bridge = await _bridge_verdict(executor, command)
        seen[command] = (cli, bridge)
    assert all(cli == bridge for cli, bridge in seen.values()), seen
    assert seen["//weather clear"][1] == "deny"
    assert seen["weather clear"][1] == "allow"
    if executor == "console":
        assert seen["gamerule keepInventory true"][1] == "confirm"
