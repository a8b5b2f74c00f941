"""run_command against a scripted link: the whitelist, confirmations and honest results."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bridge.control.messages_file import ApprovalMessages
from bridge.link.codes import ErrorCode as LinkCode
from bridge.link.errors import LinkRequestError
from bridge.link.messages import ApprovalShow, ApprovalShowResult, CommandDispatch, WireModel
from bridge.policy.approvals import ApprovalBroker
from bridge.policy.whitelist import Whitelist
from bridge.redaction import Redactor
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.plugin_access import PluginAccess
from bridge.tools.results import ErrorCode, ToolFailure
from bridge.tools.run_command import RunCommand, RunCommandSettings

from .plugin_fakes import (
    ALEX,
    ALL_FEATURES,
    STEVE,
    FakeLink,
    access,
    context,
    dispatcher,
    online,
    resolver,
)

WHITELIST = Whitelist(
    player=["spawn", "time query (day|daytime)"],
    console=["time set (day|night)", "weather (clear|rain)", "say [a-z0-9 =]{1,40}"],
)
WAIT = 10.0

# Each must be refused for the console and for the asking player, and nothing dispatched.
BYPASSES = [
    "op Steve",
    "/op Steve",
    "minecraft:op Steve",
    "execute as @a run op Steve",
    "execute run time set day",
    "time set day\nop Steve",
    "time set day\rop Steve",
    "time set day\u2028op Steve",
    "time set day\u2029op Steve",
    "time set day\u200bop",
    "time set day @a",
    "time set @e[type=player] day",
    "time set day ",
    " time set day",
    "time  set day",
    "time set day; op Steve",
    "time set day && op Steve",
    "time set day\x00",
    "minecraft:time set day",
    "§ctime set day",
    "spawn\nop Steve",
    "spawn @a",
]


class Harness:
    def __init__(
        self,
        *,
        answer: str | None = None,
        features: tuple[str, ...] = ALL_FEATURES,
        timeout_s: float = 60.0,
    ) -> None:
        self.broker = ApprovalBroker()
        self.audit = MemoryAudit()
        self.answer = answer
        self.shown = asyncio.Event()
        self.link = FakeLink(
            {
                "players.list": online(STEVE, ALEX),
                "command.dispatch": dispatcher(),
                "command.resolve": resolver(),
                "approval.show": self._show,
            }
        )
        self.plugin: PluginAccess = access(self.link, features)
        self.tool = RunCommand(
            self.plugin,
            self.broker,
            whitelist=WHITELIST,
            messages=ApprovalMessages(),
            audit=self.audit,
            redactor=Redactor(),
            settings=RunCommandSettings(confirmation_timeout_s=timeout_s),
        )

    def _show(self, data: WireModel) -> WireModel:
        assert isinstance(data, ApprovalShow)
        self.shown.set()
        if self.answer == "quit":
            asyncio.get_running_loop().call_soon(self.broker.player_quit, data.player)
        elif self.answer is not None:
            # The click arrives after the prompt is up, from the target.
            loop = asyncio.get_running_loop()
            loop.call_soon(self.broker.answer, ALEX, self.answer, data.token)
        return ApprovalShowResult(shown=True)

    async def run(self, **arguments: Any) -> dict[str, Any]:
        arguments.setdefault("intent", "test")
        return await asyncio.wait_for(self.tool.run(arguments, context(STEVE)), WAIT)

    @property
    def dispatched(self) -> list[CommandDispatch]:
        return list(self.link.of("command.dispatch"))

    def statuses(self) -> list[Any]:
        return [fields["status"] for kind, fields in self.audit.events]


async def test_the_asking_players_own_whitelisted_command_runs_as_them() -> None:
    harness = Harness()
    result = await harness.run(command="/time query day", player="Steve")
    assert result == {
        "status": "dispatched",
        "command": "time query day",
        "executor": "player",
        "player": "Steve",
        "dispatch_status": "dispatched",
        "execution_result": "unknown",
    }
    [sent] = harness.dispatched
    assert (sent.executor, sent.player, sent.command) == ("player", STEVE.uuid, "time query day")
    assert harness.audit.events[-1][1]["rule"] == "time query (day|daytime)"


async def test_a_whitelisted_console_command_runs_with_its_feedback() -> None:
    harness = Harness()
    result = await harness.run(command="TIME set night", player="")
    assert result["status"] == "dispatched" and result["executor"] == "console"
    assert result["command"] == "time set night"
    assert result["feedback"] == ["Ran: time set night"]
    assert result["execution_result"] == "unknown"
    assert harness.dispatched[0].player is None


async def test_a_rejected_dispatch_is_not_reported_as_run() -> None:
    harness = Harness()
    harness.link.responders["command.dispatch"] = dispatcher("rejected")
    result = await harness.run(command="weather rain", player="")
    assert result["dispatch_status"] == "rejected" and result["execution_result"] == "not_run"


@pytest.mark.parametrize("command", BYPASSES)
@pytest.mark.parametrize("player", ["", "Steve"])
async def test_whitelist_bypasses_are_refused(command: str, player: str) -> None:
    harness = Harness()
    result = await harness.run(command=command, player=player)
    assert result["status"] == "refused", result
    assert result["reason"]
    assert harness.dispatched == [] and harness.link.of("approval.show") == []
    assert harness.statuses() == ["refused"]


async def test_unlisted_commands_are_refused_for_each_executor() -> None:
    harness = Harness()
    assert (await harness.run(command="spawn", player=""))["status"] == "refused"
    assert (await harness.run(command="time set day", player="Steve"))["status"] == "refused"
    assert harness.dispatched == []


async def test_another_player_confirms_and_the_command_runs_as_them() -> None:
    harness = Harness(answer="approve")
    result = await harness.run(
        command="/give Alex minecraft:bread 2", intent="feed Alex", player="Alex"
    )
    assert result["status"] == "dispatched" and result["player"] == "Alex"
    assert result["execution_result"] == "unknown" and "feedback" not in result
    [show] = harness.link.of("approval.show")
    assert show.player == ALEX.uuid and show.expires_ms == 60_000
    assert show.prompt.values is not None
    assert show.prompt.values["command"] == "give Alex minecraft:bread 2"
    assert show.prompt.values["requester"] == "Steve"
    assert all(
        b.hover is not None and b.hover.values == {"intent": "feed Alex"} for b in show.buttons
    )
    [sent] = harness.dispatched
    assert (sent.executor, sent.player, sent.command) == (
        "player",
        ALEX.uuid,
        "give Alex minecraft:bread 2",
    )
    assert harness.audit.events[-1][1]["confirmed"] is True


async def test_a_player_can_be_named_by_uuid() -> None:
    harness = Harness(answer="deny")
    result = await harness.run(command="spawn", player=ALEX.uuid.upper())
    assert result == {"status": "denied", "command": "spawn", "player": "Alex"}
    assert harness.dispatched == []


@pytest.mark.parametrize(("answer", "status"), [("deny", "denied"), ("quit", "target_offline")])
async def test_no_confirmation_no_dispatch(answer: str, status: str) -> None:
    harness = Harness(answer=answer)
    result = await harness.run(command="give Alex minecraft:diamond 64", player="Alex")
    assert result["status"] == status
    assert harness.dispatched == [] and harness.broker.open_prompts == 0


async def test_an_unanswered_prompt_times_out() -> None:
    harness = Harness(timeout_s=1.0)
    result = await harness.run(command="spawn", player="Alex")
    assert result["status"] == "timed_out" and harness.dispatched == []


@pytest.mark.parametrize("player", ["Herobrine", "alex", "Alex ", "0" * 36])
async def test_a_player_who_is_not_online_exactly_as_named_is_offline(player: str) -> None:
    harness = Harness(answer="approve")
    result = await harness.run(command="spawn", player=player)
    assert result["status"] == "target_offline"
    assert harness.dispatched == [] and harness.link.of("approval.show") == []


async def test_a_target_gone_by_dispatch_time_is_offline() -> None:
    harness = Harness(answer="approve")

    def gone(_: WireModel) -> WireModel:
        raise LinkRequestError(LinkCode.PLAYER_OFFLINE, "left")

    harness.link.responders["command.dispatch"] = gone
    result = await harness.run(command="spawn", player="Alex")
    assert result["status"] == "target_offline"


async def test_invalid_commands_for_another_player_are_refused_before_any_prompt() -> None:
    harness = Harness(answer="approve")
    for command in ("spawn\nop Alex", "spawn\u2028op Alex", "say  hi", "x" * 300):
        result = await harness.run(command=command, player="Alex")
        assert result["status"] == "refused"
    assert harness.link.of("approval.show") == [] and harness.dispatched == []


async def test_without_the_approvals_feature_no_prompt_is_attempted() -> None:
    harness = Harness(answer="approve", features=("snapshots", "command.resolve"))
    result = await harness.run(command="spawn", player="Alex")
    assert result["status"] == "refused" and "confirm" in result["reason"]
    assert harness.link.of("approval.show") == []


async def test_a_dispatch_timeout_says_the_outcome_is_unknown() -> None:
    harness = Harness()

    def slow(_: WireModel) -> WireModel:
        raise LinkRequestError(LinkCode.TIMEOUT, "no answer")

    harness.link.responders["command.dispatch"] = slow
    with pytest.raises(ToolFailure, match="may or may not") as caught:
        await harness.run(command="weather clear", player="")
    assert caught.value.code is ErrorCode.TIMEOUT
    assert harness.statuses() == ["dispatch_failed"]


async def test_a_link_that_is_down_is_unavailable() -> None:
    harness = Harness()
    harness.plugin.disconnected()
    with pytest.raises(ToolFailure) as caught:
        await harness.run(command="weather clear", player="")
    assert caught.value.code is ErrorCode.UNAVAILABLE and harness.link.sent == []


@pytest.mark.parametrize(
    "arguments",
    [
        {"command": "", "player": ""},
        {"command": 3, "player": ""},
        {"command": "spawn", "player": 7},
        {"command": "spawn", "player": "", "intent": "line\nbreak"},
        {"command": "spawn", "player": "", "intent": "x" * 513},
        {"command": "spawn", "player": "", "executor": "console"},
    ],
)
async def test_bad_arguments_are_clear_errors(arguments: dict[str, Any]) -> None:
    harness = Harness()
    with pytest.raises(ToolFailure) as caught:
        await harness.tool.run(arguments, context())
    assert caught.value.code is ErrorCode.INVALID_ARGUMENTS
    assert harness.link.sent == []


async def test_the_audit_record_is_redacted() -> None:
    harness = Harness()
    await harness.run(command="say token=abcdefghijklmnop", player="")
    [(kind, fields)] = harness.audit.events
    assert kind == "run_command.decision" and fields["status"] == "dispatched"
    assert "abcdefghijklmnop" not in str(fields["command"])


async def test_cancelling_the_turn_during_a_prompt_closes_it() -> None:
    harness = Harness()
    task = asyncio.create_task(harness.tool.run({"command": "spawn", "player": "Alex"}, context()))
    await asyncio.wait_for(harness.shown.wait(), WAIT)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, WAIT)
    assert harness.broker.open_prompts == 0 and harness.dispatched == []


async def test_a_command_holding_a_secret_is_never_shown_to_another_player() -> None:
    harness = Harness(answer="approve")
    key = "sk-proj-" + "Qw3Er5Ty7Ui9Op1As3Df5Gh"
    result = await harness.run(command=f"msg Alex the key is {key}", player="Alex")
    assert result["status"] == "refused" and "secret" in result["reason"]
    assert list(harness.link.of("approval.show")) == [] and harness.dispatched == []
    assert key not in str(harness.audit.events)


async def test_the_intent_shown_with_the_prompt_is_redacted() -> None:
    harness = Harness(answer="approve")
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    await harness.run(command="spawn", intent=f"Alex asked, token {key}", player="Alex")
    [show] = harness.link.of("approval.show")
    assert key not in show.model_dump_json()
