"""Confirmations by another player: the never list, invisible characters, one prompt per turn."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bridge.control.messages_file import ApprovalMessages, MessagesFile
from bridge.control.whitelist_file import WhitelistFile
from bridge.link.messages import ApprovalShow, ApprovalShowResult, WireModel
from bridge.policy.approvals import ApprovalBroker, confirmation_prompt
from bridge.policy.whitelist import InvalidCommand, Whitelist, canonicalize, compile_whitelist
from bridge.redaction import Redactor
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.results import ErrorCode, ToolFailure
from bridge.tools.run_command import RunCommand

from .plugin_fakes import ALEX, STEVE, FakeLink, access, context, dispatcher, online, resolver

WAIT = 10.0

# Blank or default-ignorable code points that str.isprintable() lets through (all but the last
# four were accepted before) and a few it already refused, for completeness.
INVISIBLE = [
    "\u3164", "\u115f", "\u1160", "\uffa0", "\u034f", "\ufe0f", "\ufe00", "\u2800", "\u180b",
    "\u17b4", "\U000e0100", "\U0001d159", "\ufffc", "\u180f",
    "\u200b", "\u2060", "\u00ad", "\ufeff",
]  # fmt: skip

NEVER = [
    "op Steve",
    "OP Steve",
    "minecraft:op Steve",
    "deop Alex",
    "minecraft:deop Alex",
    "ban Alex",
    "minecraft:ban-ip 1.2.3.4",
    "pardon Griefer",
    "minecraft:pardon-ip 1.2.3.4",
    "stop",
    "minecraft:stop",
    "whitelist off",
    "minecraft:whitelist add Griefer",
    "lp user Steve permission set *",
    "luckperms user Steve parent set admin",
    "luckperms:lp user Steve permission set *",
    "LuckPerms:luckperms group admin",
    "execute as Alex run op Steve",
    "minecraft:execute as @a run deop Alex",
    "essentials:sudo Alex op Steve",
    "pex user Steve add *",
    "eco give Steve 1000000",
    "essentials:eco set Steve 1000000",
]


class Confirmations:
    def __init__(self, whitelist: Whitelist | None = None) -> None:
        self.broker = ApprovalBroker()
        self.shown: list[ApprovalShow] = []
        self.link = FakeLink(
            {
                "players.list": online(STEVE, ALEX),
                "command.dispatch": dispatcher(),
                "command.resolve": resolver(),
                "approval.show": self._show,
            }
        )
        self.tool = RunCommand(
            access(self.link),
            self.broker,
            whitelist=whitelist or Whitelist(),
            messages=ApprovalMessages(),
            audit=MemoryAudit(),
            redactor=Redactor(),
        )

    def _show(self, data: WireModel) -> WireModel:
        assert isinstance(data, ApprovalShow)
        self.shown.append(data)
        asyncio.get_running_loop().call_soon(self.broker.answer, ALEX, "deny", data.token)
        return ApprovalShowResult(shown=True)

    async def run(self, turn: str | None = None, **arguments: Any) -> dict[str, Any]:
        arguments.setdefault("intent", "test")
        call = self.tool.run(arguments, context(STEVE, turn_id=turn))
        return await asyncio.wait_for(call, WAIT)


@pytest.mark.parametrize("command", NEVER)
async def test_no_confirmation_can_pass_the_never_list(command: str) -> None:
    harness = Confirmations()
    result = await harness.run(command=command, player="Alex")
    assert result["status"] == "refused" and "never list" in result["reason"]
    assert harness.shown == [] and harness.link.of("command.dispatch") == []


async def test_an_ordinary_command_is_still_asked() -> None:
    harness = Confirmations()
    result = await harness.run(command="give Alex minecraft:bread 2", player="Alex")
    assert result["status"] == "denied" and len(harness.shown) == 1


async def test_the_never_list_is_built_in_and_whitelist_yml_adds_to_it() -> None:
    default = compile_whitelist(WhitelistFile.model_validate({"schema": 1}))
    assert {"op", "deop", "lp", "luckperms", "stop", "whitelist"} <= default.never.command_names
    # never: [] no longer switches it off: the built-in categories stay.
    emptied = compile_whitelist(WhitelistFile.model_validate({"schema": 1, "never": []}))
    harness = Confirmations(emptied)
    assert (await harness.run(command="op Alex", player="Alex"))["status"] == "refused"
    custom = compile_whitelist(WhitelistFile.model_validate({"schema": 1, "never": ["give"]}))
    harness = Confirmations(custom)
    refused = await harness.run(command="minecraft:give Alex diamond 64", player="Alex")
    assert refused["status"] == "refused" and "owner: listed under never" in refused["reason"]


async def test_a_wrapper_is_judged_by_the_command_it_carries() -> None:
    harness = Confirmations()
    result = await harness.run(command="execute run say hi", player="Alex")
    assert result["status"] == "denied" and len(harness.shown) == 1


@pytest.mark.parametrize("root", ["minecraft:op", "op Steve", "", "OP"])
def test_a_never_entry_must_be_a_bare_root(root: str) -> None:
    with pytest.raises(ValueError, match="command root"):
        WhitelistFile.model_validate({"schema": 1, "never": [root]})


@pytest.mark.parametrize("char", INVISIBLE, ids=lambda c: f"U+{ord(c):04X}")
def test_commands_with_an_invisible_character_are_refused_and_say_which(char: str) -> None:
    with pytest.raises(InvalidCommand, match=f"U\\+{ord(char):04X}"):
        canonicalize(f"give Alex{char} minecraft:diamond 64")
    with pytest.raises(InvalidCommand, match="invisible"):
        canonicalize(f"say {char}")


@pytest.mark.parametrize("char", INVISIBLE, ids=lambda c: f"U+{ord(c):04X}")
async def test_intents_with_an_invisible_character_are_refused_before_any_prompt(
    char: str,
) -> None:
    harness = Confirmations()
    with pytest.raises(ToolFailure) as caught:
        await harness.run(
            command="give Alex minecraft:bread 2", player="Alex", intent=f"a gift{char}for you"
        )
    assert caught.value.code is ErrorCode.INVALID_ARGUMENTS
    assert "invisible" in caught.value.message
    assert harness.shown == []


@pytest.mark.parametrize("char", INVISIBLE, ids=lambda c: f"U+{ord(c):04X}")
async def test_a_confirmed_command_with_an_invisible_character_never_reaches_the_prompt(
    char: str,
) -> None:
    harness = Confirmations()
    result = await harness.run(command=f"give Alex{char} minecraft:bread 2", player="Alex")
    assert result["status"] == "refused" and f"U+{ord(char):04X}" in result["reason"]
    assert harness.shown == []


async def test_one_turn_asks_each_player_at_most_once() -> None:
    harness = Confirmations()
    first = await harness.run(turn="t-chain", command="give Alex minecraft:bread 2", player="Alex")
    assert first["status"] == "denied"
    again = await harness.run(turn="t-chain", command="give Alex minecraft:bread 3", player="Alex")
    assert again["status"] == "refused" and "already asked" in again["reason"]
    assert len(harness.shown) == 1
    # A new turn (a new request from a player) may ask again.
    later = await harness.run(turn="t-next", command="give Alex minecraft:bread 3", player="Alex")
    assert later["status"] == "denied" and len(harness.shown) == 2


async def test_parallel_calls_of_one_turn_open_one_prompt() -> None:
    harness = Confirmations()
    calls = [
        harness.run(turn="t-par", command=f"give Alex minecraft:bread {n}", player="Alex")
        for n in (1, 2, 3)
    ]
    results = await asyncio.gather(*calls)
    assert sorted(result["status"] for result in results) == ["denied", "refused", "refused"]
    assert len(harness.shown) == 1


def test_the_prompt_says_who_asks_for_whom_and_puts_the_intent_on_its_own_line() -> None:
    prompt, buttons, _ = confirmation_prompt(
        MessagesFile.model_validate({"schema": 1}).approval,
        requester="Steve",
        target="Alex",
        command="give Steve minecraft:diamond 64",
        intent="Alex's daily login reward (free gift for you!)",
        assistant="Mineclaw",
    )
    sentence, intent_line = prompt.template.split("<newline>")
    assert "<intent>" not in sentence and "<intent>" in intent_line
    values = prompt.values or {}
    filled = sentence
    for name, value in values.items():
        filled = filled.replace(f"<{name}>", value)
    assert "Mineclaw (the assistant) asks you, on behalf of Steve" in filled
    assert "Alex's daily login reward" not in filled
    assert intent_line.replace("<intent>", values["intent"]).endswith(
        "says why: <white>Alex's daily login reward (free gift for you!)"
    )
    assert all(button.hover is not None for button in buttons)


def test_an_old_prompt_template_with_the_intent_inside_the_sentence_is_refused() -> None:
    old = "<yellow><requester> wants to run <command> as you (<intent>). <accept> <deny>"
    with pytest.raises(ValueError, match="<intent>"):
        MessagesFile.model_validate({"schema": 1, "approval": {"prompt": old}})
