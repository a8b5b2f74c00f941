"""run_command and the never list on the server's resolution of each label: aliases, unknown
labels and wrappers are refused before any prompt or dispatch, on every path."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bridge.control.messages_file import ApprovalMessages
from bridge.control.whitelist_file import WhitelistFile
from bridge.link.messages import ApprovalShow, ApprovalShowResult, WireModel
from bridge.policy.approvals import ApprovalBroker
from bridge.policy.whitelist import Whitelist, compile_whitelist
from bridge.redaction import Redactor
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.run_command import RunCommand

from .plugin_fakes import ALEX, STEVE, FakeLink, access, context, dispatcher, online, resolver

WAIT = 10.0

ALIASED = [
    "esudo Alex op Steve",
    "essentials:esudo Alex op Steve",
    "eban Griefer",
    "etempban Griefer 1d",
    "eeco give Steve 1000000",
    "economy give Steve 1000000",
    "perm user Steve permission set *",
    "pm unload LuckPerms",
    "plugman unload LuckPerms",
    "execute run esudo Alex op Steve",
    "return run eban Griefer",
    'data merge block 1 2 3 {Command:"eban Griefer"}',
    'summon command_block_minecart ~ ~ ~ {Command:"/esudo Alex op"}',
    "cmi sudo Alex op Steve",
    "transfer evil.example 25565 @a",
]
UNKNOWN = ["nosuch Alex", "execute run nosuch Alex", 'data merge block 1 2 3 {Command:"nosuch"}']


class Harness:
    def __init__(self, whitelist: Whitelist | None = None, *, answer: str = "approve") -> None:
        self.broker = ApprovalBroker()
        self.shown: list[ApprovalShow] = []
        self.answer = answer
        self.map_extra: dict[str, dict[str, object]] = {}
        self.resolve = resolver()
        self.link = FakeLink(
            {
                "players.list": online(STEVE, ALEX),
                "command.dispatch": dispatcher(),
                "approval.show": self._show,
                "command.resolve": lambda data: self.resolve(data),
            }
        )
        self.on_show: Any = None
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
        if self.on_show is not None:
            self.on_show()
        asyncio.get_running_loop().call_soon(self.broker.answer, ALEX, self.answer, data.token)
        return ApprovalShowResult(shown=True)

    async def run(self, **arguments: Any) -> dict[str, Any]:
        arguments.setdefault("intent", "test")
        return await asyncio.wait_for(self.tool.run(arguments, context(STEVE)), WAIT)

    @property
    def dispatched(self) -> list[Any]:
        return list(self.link.of("command.dispatch"))


@pytest.mark.parametrize("command", ALIASED)
async def test_an_alias_or_wrapper_of_a_never_listed_command_is_refused_before_the_prompt(
    command: str,
) -> None:
    harness = Harness()
    result = await harness.run(command=command, player="Alex")
    assert result["status"] == "refused" and "never list" in result["reason"], result
    assert harness.shown == [] and harness.dispatched == []


@pytest.mark.parametrize("command", UNKNOWN)
async def test_an_unknown_label_is_refused_not_dispatched(command: str) -> None:
    for path in ({"player": "Alex"}, {"player": ""}, {"player": "Steve"}):
        rules = Whitelist(player=[".+"], console=[".+"])
        harness = Harness(rules)
        result = await harness.run(command=command, **path)
        assert result["status"] == "refused" and "no command 'nosuch'" in result["reason"]
        assert harness.shown == [] and harness.dispatched == []


@pytest.mark.parametrize("command", ["esudo Alex op Steve", "eban Griefer", "pm unload X"])
async def test_owner_rules_do_not_reach_an_alias_without_the_opt_out(command: str) -> None:
    harness = Harness(Whitelist(player=[".+"], console=[".+"]))
    for player in ("", "Steve"):
        result = await harness.run(command=command, player=player)
        assert result["status"] == "refused" and "never list" in result["reason"]
    assert harness.dispatched == []


async def test_a_rule_with_allow_never_reaches_it_and_says_so() -> None:
    file = WhitelistFile.model_validate(
        {"schema": 1, "console": [{"rule": "eban [A-Za-z]+", "allow_never": True}]}
    )
    harness = Harness(compile_whitelist(file))
    result = await harness.run(command="eban Griefer", player="")
    assert result["status"] == "dispatched"
    assert [d.command for d in harness.dispatched] == ["eban Griefer"]
    # the opt-out never lets an unknown label through
    file = WhitelistFile.model_validate(
        {"schema": 1, "console": [{"rule": "nosuch", "allow_never": True}]}
    )
    harness = Harness(compile_whitelist(file))
    assert (await harness.run(command="nosuch", player=""))["status"] == "refused"


async def test_the_two_person_rule_is_judged_before_the_prompt() -> None:
    harness = Harness(Whitelist(console_confirm=["e?ban [A-Za-z]+"]))
    result = await harness.run(command="eban Griefer", player="", approver="Alex")
    assert result["status"] == "refused" and "never list" in result["reason"]
    assert harness.shown == [] and harness.dispatched == []


async def test_the_command_is_judged_again_right_before_the_dispatch() -> None:
    harness = Harness()

    # While Alex reads the prompt, a plugin claims the label: its new owner is never-listed.
    def reload_plugins() -> None:
        harness.resolve = resolver(
            {
                "warp": {
                    "name": "warp",
                    "plugin": "LuckPerms",
                    "aliases": [],
                    "permission": "luckperms.warp",
                }
            }
        )

    harness.on_show = reload_plugins
    result = await harness.run(command="warp Alex home", player="Alex")
    assert len(harness.shown) == 1
    assert result["status"] == "refused" and "LuckPerms owns it" in result["reason"]
    assert harness.dispatched == []


async def test_an_ordinary_command_resolved_to_a_harmless_plugin_is_asked() -> None:
    harness = Harness(answer="deny")
    result = await harness.run(command="go Alex", player="Alex")
    assert result["status"] == "denied" and len(harness.shown) == 1


async def test_a_plugin_without_resolution_dispatches_nothing() -> None:
    harness = Harness(Whitelist(console=["time set day"]))
    harness.tool = RunCommand(
        access(harness.link, ("snapshots", "approvals")),
        harness.broker,
        whitelist=Whitelist(console=["time set day"]),
        messages=ApprovalMessages(),
        audit=MemoryAudit(),
    )
    result = await harness.run(command="time set day", player="")
    assert result["status"] == "refused" and "command.resolve" in result["reason"]
    assert harness.dispatched == []
