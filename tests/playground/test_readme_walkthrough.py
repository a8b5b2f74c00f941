"""The README's playground walk-through, typed into the real command as it is printed there.

Each line of the README's block is typed through ``mineclaw-bridge try``'s pipes (the command
``make try`` runs), in the README's order, and the lines it should bring are waited for (one
generous bound each, never a time). A line added to the README without its expected lines
here fails the test, so the walk-through and the playground cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from bridge.control import init_config_dir
from bridge.playground.scripted_model import HELP

from .try_process import TryProcess

README = Path(__file__).parents[2] / "README.md"
NO_COOLDOWNS = (
    "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
    "environment:\n  tool_cooldown_ms: 0\n"
)


def walkthrough() -> list[str]:
    """What the README's block says to type, line by line (``a, b`` is two lines)."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```text\n(@ai where am I.*?)```", text, re.DOTALL)
    assert block is not None, "the README's playground block is gone"
    typed: list[str] = []
    for line in block.group(1).splitlines():
        command = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        typed.extend(part.strip() for part in command.split(", "))
    return typed


def _where(p: TryProcess) -> None:
    p.expect(r"┊ bridge: tool\.call .*name=\"player_snapshot\"")
    p.expect(r"\[scripted offline model\] player_snapshot said: you are in world")


def _ask(p: TryProcess) -> None:
    p.expect(r"^\[prompt → Steve\] .*Shall I go on\? \[\[Yes\]\] \[\[No\]\]")
    p.type("y")
    p.expect(r'\[scripted offline model\] ask_player said: your answer was "yes"')


def _day(p: TryProcess) -> None:
    p.expect(r"┊ bridge: run_command\.decision .*command=\"time set day\".*status=\"refused\"")
    p.expect(r"\[scripted offline model\] run_command said: the bridge")


def _wave(p: TryProcess) -> None:
    p.expect(r"^\[prompt → Alex\] .*on behalf of Steve, to run me waves as you.*\[\[Accept\]\]")
    p.type("/as Alex")
    p.expect(r"^» you are Alex now$")
    p.type("y")
    p.expect(r"┊ server: Alex ran /me waves \(simulated: nothing changes\)")
    p.expect(r"┊ bridge: turn\.end")
    p.type("/as Steve")
    p.expect(r"^» you are Steve now$")


def _online(p: TryProcess) -> None:
    p.expect(r"^\[private → Steve\] .*\[scripted offline model\] online_players said")
    p.expect_said("online_players said: online: Alex, Steve")


def _remember(p: TryProcess) -> None:
    p.expect(r"^\[private → Steve\] Remembered: my base is at the river$")
    p.expect_said("remember said: I will remember: my base is at the river")


def _recall(p: TryProcess) -> None:
    p.expect(r"┊ bridge: tool\.call .*name=\"recall\"")
    p.expect_said("recall said: I remember: my base is at the river")


def _dice(p: TryProcess) -> None:
    p.expect(r"┊ bridge: function\.end .*function=\"dice\".*status=\"ok\"")
    p.expect(r'┊ bridge: model read the tool result: .*"output": \{"rolled": [1-6], "of": 6\}')
    p.expect_said('call_function said: the Function answered ok: {"rolled": ')


def _page(p: TryProcess) -> None:
    p.expect(r"┊ bridge: web\.fetch .*outcome=\"ok\" .*url=\"http://127\.0\.0\.1:\d+/test-page\"")
    p.expect_said("says: Title: Playground test page")
    p.expect_said("The secret word of the day is creeper.")


def _mcp(p: TryProcess) -> None:
    p.expect(r"┊ bridge: tool\.call .*name=\"mcp__demo__server_facts\"")
    p.expect_said("spawn is at x=0 y=64 z=0 (from the demo MCP server)")


def _alex_op(p: TryProcess) -> None:
    p.expect(r"^» you are Alex \(op\) now$")


def _persona(p: TryProcess) -> None:
    p.expect(r"^\[private → Alex\] Your private conversations now speak as: playground-pirate\.$")


def _hello(p: TryProcess) -> None:
    p.expect_said("(speaking as the persona: You are a cheerful pirate.)")
    p.expect_said("then /ai hello.")  # the help still whole after the persona's opening


def _status(p: TryProcess) -> None:
    p.expect(r"^\[private → Alex\] model: playground/scripted$")
    p.expect(r"^\[private → Alex\] web tools: on \(web_fetch\)$")
    # The bridge's own layer as `serve` sets it (it said "unavailable: not set (not serving)").
    p.expect(r"^\[private → Alex\] Function sandbox: .*; not_dumpable on$")


def _listen_on(p: TryProcess) -> None:
    p.expect(r"^\[chat\] Mineclaw is now listening to public chat\.$")


def _listened(p: TryProcess) -> None:
    # The plugin's AI prefix marks a line listen mode took (it was shown as a plain line).
    p.expect(r"^\[chat\] \[AI\] <Alex> how do I tame a wolf$")
    p.expect(r"┊ bridge: turn\.start .*implicit=true")
    p.expect(r"┊ bridge: turn\.end")


def _still_listening(p: TryProcess) -> None:
    p.expect(r"^\[private → Alex\] Listen mode is on\.$")


def _disconnect(p: TryProcess) -> None:
    p.expect(r"┊ bridge: link\.down")


def _connect(p: TryProcess) -> None:
    p.expect(r"┊ bridge: link\.up")


def _quit(p: TryProcess) -> None:
    p.expect(r"^» bye$")


STEPS: dict[str, Callable[[TryProcess], None]] = {
    "@ai where am I": _where,
    "@ai ask me first": _ask,
    "@ai make it day": _day,
    "@ai make Alex wave": _wave,
    "/ai who is online": _online,
    "@ai remember my base is at the river": _remember,
    "@ai what do you remember about my base": _recall,
    "@ai roll a die": _dice,
    "@ai fetch the test page": _page,
    "@ai ask the demo server": _mcp,
    "/as Alex op": _alex_op,
    "/ai persona playground-pirate": _persona,
    "/ai hello": _hello,
    "/mineclaw status": _status,
    "/mineclaw listen on": _listen_on,
    "how do I tame a wolf": _listened,
    "/disconnect": _disconnect,
    "/connect": _connect,
    "/mineclaw listen status": _still_listening,
    "/quit": _quit,
}


def test_every_line_of_the_readme_walkthrough_is_checked() -> None:
    assert walkthrough() == list(STEPS), "README's block and STEPS differ: update both"


def test_the_scripted_models_help_lists_what_to_type_for_each_demo() -> None:
    flat = " ".join(HELP.split())
    for typed in walkthrough():
        if typed.startswith("@ai "):
            assert typed.removeprefix("@ai ") in flat, typed
    assert "/ai persona playground-pirate, then /ai hello" in flat


def test_the_readme_walkthrough_typed_into_the_real_command(tmp_path: Path) -> None:
    config = tmp_path / "mineclaw-config"
    init_config_dir(config)
    (config / "config.yml").write_text(NO_COOLDOWNS)
    p = TryProcess(tmp_path)
    try:
        p.expect(r"the copy also has .*the demo MCP server, the dice Function")
        # The demo server's tools are offered once it has started: an event, waited for.
        p.expect(r"┊ bridge: MCP tools offered: mcp__demo__server_facts$")
        p.type("@ai help")
        p.expect(r"\[scripted offline model\] I answer from a fixed set\. Try:")
        # All of it reaches the chat: a longer list was cut at the reply's eighth line.
        p.expect_said(
            "As an operator (/as Steve op): /ai persona playground-pirate, then /ai hello."
        )
        p.expect(r"┊ bridge: turn\.end")
        for typed in walkthrough():
            p.type(typed)
            STEPS[typed](p)
        assert p.wait() == 0
    finally:
        p.kill()
    assert not (config / "workspace" / "souls").exists()  # the demos are the copy's alone
