"""The approval broker and the approve/deny commands, against a scripted link."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import pytest
from support.fake_link import FakeLink

from bridge.control.messages_file import ApprovalMessages
from bridge.link.codes import ErrorCode
from bridge.link.errors import LinkRequestError
from bridge.link.messages import (
    ApprovalShow,
    ApprovalShowResult,
    CommandRequest,
    CommandSender,
    PlayerRef,
    Text,
    WireModel,
)
from bridge.policy.approval_commands import INVALID_ANSWER, USAGE, ApprovalCommands
from bridge.policy.approvals import (
    AnswerVerdict,
    ApprovalBroker,
    ApprovalError,
    ApprovalOutcome,
    Subject,
    confirmation_prompt,
)
from bridge.store.audit_sink import MemoryAudit

STEVE = PlayerRef(uuid="3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f", name="Steve")
ALEX = PlayerRef(uuid="0b6f7c1e-2d3a-4e5f-8a9b-0c1d2e3f4a5b", name="Alex")


SUBJECT = Subject("command", ALEX.uuid, "give Alex minecraft:diamond 1")
PROMPT, BUTTONS, DISPLAY = confirmation_prompt(
    ApprovalMessages(),
    requester="Steve",
    target="Alex",
    command=SUBJECT.detail,
    intent="a gift",
    assistant="Mineclaw",
)
WAIT = 10.0  # a bound on every wait, never a measured threshold


class Prompts:
    """A link whose approval.show is answered as scripted; records when a prompt is up."""

    def __init__(self, shown: bool = True, error: ErrorCode | None = None) -> None:
        self.up = asyncio.Event()
        self.link = FakeLink({"approval.show": self._show})
        self._shown = shown
        self._error = error
        self.before_answer: Callable[[ApprovalShow], None] | None = None

    def _show(self, data: WireModel) -> WireModel:
        assert isinstance(data, ApprovalShow)
        if self._error is not None:
            raise LinkRequestError(self._error, "scripted")
        if self.before_answer is not None:
            self.before_answer(data)
        self.up.set()
        return ApprovalShowResult(shown=self._shown)

    @property
    def token(self) -> str:
        shows = self.link.of("approval.show")
        assert len(shows) == 1
        token: str = shows[0].token
        return token


async def _open(
    broker: ApprovalBroker, prompts: Prompts, *, timeout_s: float = 60.0
) -> asyncio.Task[ApprovalOutcome]:
    task = asyncio.create_task(
        broker.request(
            prompts.link,
            target=ALEX,
            subject=SUBJECT,
            prompt=PROMPT,
            buttons=BUTTONS,
            timeout_s=timeout_s,
            display=DISPLAY,
        )
    )
    await asyncio.wait_for(prompts.up.wait(), WAIT)
    return task


async def test_the_target_approves_and_the_outcome_binds_the_exact_subject() -> None:
    broker, prompts = ApprovalBroker(), Prompts()
    task = await _open(broker, prompts)
    show = prompts.link.of("approval.show")[0]
    assert show.player == ALEX.uuid and show.expires_ms == 60_000
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", show.token)
    result = broker.answer(ALEX, "approve", prompts.token)
    assert result.verdict is AnswerVerdict.APPROVED and result.display["command"] == SUBJECT.detail
    outcome = await asyncio.wait_for(task, WAIT)
    assert outcome.approves(SUBJECT)
    assert not outcome.approves(Subject("command", ALEX.uuid, "give Alex minecraft:diamond 64"))
    assert not outcome.approves(Subject("command", STEVE.uuid, SUBJECT.detail))
    assert broker.open_prompts == 0


async def test_the_target_denies() -> None:
    broker, prompts = ApprovalBroker(), Prompts()
    task = await _open(broker, prompts)
    assert broker.answer(ALEX, "deny", prompts.token).verdict is AnswerVerdict.DENIED
    outcome = await asyncio.wait_for(task, WAIT)
    assert outcome.status == "denied" and not outcome.approves(SUBJECT)


async def test_another_player_or_the_console_cannot_answer_and_the_prompt_stays_open() -> None:
    broker, prompts = ApprovalBroker(), Prompts()
    task = await _open(broker, prompts)
    assert broker.answer(STEVE, "approve", prompts.token).verdict is AnswerVerdict.INVALID
    assert broker.answer(None, "approve", prompts.token).verdict is AnswerVerdict.INVALID
    impostor = PlayerRef(uuid=STEVE.uuid, name="Alex")  # the name is not the identity
    assert broker.answer(impostor, "approve", prompts.token).verdict is AnswerVerdict.INVALID
    assert not task.done() and broker.open_prompts == 1
    assert broker.answer(ALEX, "deny", prompts.token).verdict is AnswerVerdict.DENIED
    assert (await asyncio.wait_for(task, WAIT)).status == "denied"


async def test_a_token_answers_once() -> None:
    broker, prompts = ApprovalBroker(), Prompts()
    task = await _open(broker, prompts)
    token = prompts.token
    assert broker.answer(ALEX, "approve", token).verdict is AnswerVerdict.APPROVED
    assert broker.answer(ALEX, "approve", token).verdict is AnswerVerdict.INVALID
    assert broker.answer(ALEX, "deny", token).verdict is AnswerVerdict.INVALID
    assert (await asyncio.wait_for(task, WAIT)).status == "approved"


async def test_an_unknown_token_or_an_unoffered_option_is_invalid() -> None:
    broker, prompts = ApprovalBroker(), Prompts()
    task = await _open(broker, prompts)
    assert broker.answer(ALEX, "approve", "x" * 43).verdict is AnswerVerdict.INVALID
    assert broker.answer(ALEX, "approve", prompts.token, "yes").verdict is AnswerVerdict.INVALID
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_an_answer_after_the_deadline_is_expired_even_before_the_waiter_wakes() -> None:
    now = [100.0]
    broker, prompts = ApprovalBroker(clock=lambda: now[0]), Prompts()
    task = await _open(broker, prompts)
    now[0] += 60.0
    assert broker.answer(ALEX, "approve", prompts.token).verdict is AnswerVerdict.EXPIRED
    outcome = await asyncio.wait_for(task, WAIT)
    assert outcome.status == "timeout" and not outcome.approves(SUBJECT)


async def test_nobody_answers_and_the_prompt_times_out() -> None:
    broker, prompts = ApprovalBroker(), Prompts()
    task = await _open(broker, prompts, timeout_s=1.0)
    outcome = await asyncio.wait_for(task, WAIT)
    assert outcome.status == "timeout"
    assert broker.answer(ALEX, "approve", prompts.token).verdict is AnswerVerdict.INVALID


async def test_quitting_closes_the_targets_prompts_only() -> None:
    broker, prompts = ApprovalBroker(), Prompts()
    task = await _open(broker, prompts)
    assert broker.player_quit(STEVE.uuid) == 0 and not task.done()
    assert broker.player_quit(ALEX.uuid) == 1
    assert (await asyncio.wait_for(task, WAIT)).status == "offline"
    assert broker.answer(ALEX, "approve", prompts.token).verdict is AnswerVerdict.INVALID


async def test_a_lost_link_cancels_every_prompt() -> None:
    broker, prompts = ApprovalBroker(), Prompts()
    task = await _open(broker, prompts)
    assert broker.link_lost() == 1
    assert (await asyncio.wait_for(task, WAIT)).status == "cancelled"


async def test_cancelling_the_turn_closes_the_prompt() -> None:
    broker, prompts = ApprovalBroker(), Prompts()
    task = await _open(broker, prompts)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, WAIT)
    assert broker.open_prompts == 0
    assert broker.answer(ALEX, "approve", prompts.token).verdict is AnswerVerdict.INVALID


@pytest.mark.parametrize(
    ("prompts", "status"),
    [
        (Prompts(shown=False), "not_shown"),
        (Prompts(error=ErrorCode.PLAYER_OFFLINE), "offline"),
        (Prompts(error=ErrorCode.DISCONNECTED), "not_shown"),
        (Prompts(error=ErrorCode.UNKNOWN_TYPE), "not_shown"),
    ],
)
async def test_a_prompt_that_is_not_shown_ends_at_once(prompts: Prompts, status: str) -> None:
    broker = ApprovalBroker()
    outcome = await asyncio.wait_for(
        broker.request(prompts.link, target=ALEX, subject=SUBJECT, prompt=PROMPT, buttons=BUTTONS),
        WAIT,
    )
    assert outcome.status == status and broker.open_prompts == 0


async def test_a_click_that_beats_the_show_answer_still_counts() -> None:
    broker, prompts = ApprovalBroker(), Prompts()
    prompts.before_answer = lambda show: broker.answer(ALEX, "approve", show.token) and None
    task = await _open(broker, prompts)
    assert (await asyncio.wait_for(task, WAIT)).approves(SUBJECT)


async def test_tokens_differ_and_a_repeating_source_is_refused() -> None:
    broker, prompts = ApprovalBroker(new_token=lambda: "same-token-" + "a" * 20), Prompts()
    first = await _open(broker, prompts)
    with pytest.raises(ApprovalError, match="repeated"):
        await broker.request(
            prompts.link, target=ALEX, subject=SUBJECT, prompt=PROMPT, buttons=BUTTONS
        )
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    tokens = set()
    real, more = ApprovalBroker(), Prompts()
    for _ in range(3):
        more.up.clear()
        task = await _open(real, more)
        tokens.add(more.link.of("approval.show")[-1].token)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert len(tokens) == 3


async def test_limits_on_open_prompts_and_timeouts() -> None:
    broker, prompts = ApprovalBroker(max_pending=1), Prompts()
    task = await _open(broker, prompts)
    with pytest.raises(ApprovalError, match="already open"):
        await broker.request(
            prompts.link, target=STEVE, subject=SUBJECT, prompt=PROMPT, buttons=BUTTONS
        )
    with pytest.raises(ApprovalError, match="timeout"):
        await ApprovalBroker().request(
            prompts.link,
            target=ALEX,
            subject=SUBJECT,
            prompt=PROMPT,
            buttons=BUTTONS,
            timeout_s=0.01,
        )
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_the_confirmation_prompt_keeps_values_unparsed_and_buttons_apart() -> None:
    prompt, buttons, display = confirmation_prompt(
        ApprovalMessages(),
        requester="<click:run_command:/op Steve>Steve",
        target="Alex",
        command="say <red>hi",
        intent="<b>trust me</b>",
        assistant="Mineclaw",
    )
    assert "<accept>" not in prompt.template and "<deny>" not in prompt.template
    assert "<command>" in prompt.template and prompt.model is None
    assert "<intent>" in prompt.template  # the confirming player reads why, as plain text
    assert prompt.values == {**display, "intent": "<b>trust me</b>"}
    assert display["requester"] == "<click:run_command:/op Steve>Steve"
    assert [(b.answer, b.option) for b in buttons] == [("approve", None), ("deny", None)]
    assert all(
        b.hover == Text(template="<intent>", values={"intent": "<b>trust me</b>"}) for b in buttons
    )


# ---- /mineclaw approve|deny


def _command(sender: PlayerRef | None, *args: str) -> CommandRequest:
    granted: list[Any] = ["mineclaw.command.approve"]
    if sender is None:
        who = CommandSender(kind="console", granted=granted)
    else:
        who = CommandSender(kind="player", player=sender, granted=granted)
    return CommandRequest(sender=who, args=list(args))


async def test_the_commands_answer_with_the_message_lines() -> None:
    broker, prompts = ApprovalBroker(), Prompts()
    audit = MemoryAudit()
    commands = ApprovalCommands(broker, messages=ApprovalMessages, audit=audit)
    task = await _open(broker, prompts)
    token = prompts.token
    assert commands.handles(_command(ALEX, "approve", token))
    assert not commands.handles(_command(ALEX, "status"))
    wrong = commands.handle(_command(STEVE, "approve", token))
    assert wrong.lines[0].template == INVALID_ANSWER
    console = commands.handle(_command(None, "deny", token))
    assert console.lines[0].template == INVALID_ANSWER
    reply = commands.handle(_command(ALEX, "approve", token))
    assert reply.lines[0].template == ApprovalMessages().accepted
    assert reply.lines[0].values is not None
    assert reply.lines[0].values["command"] == SUBJECT.detail
    assert (await asyncio.wait_for(task, WAIT)).approves(SUBJECT)
    replay = commands.handle(_command(ALEX, "approve", token))
    assert replay.lines[0].template == INVALID_ANSWER
    verdicts = [
        (f["sender"], f["verdict"]) for kind, f in audit.events if kind == "approval.answer"
    ]
    assert verdicts == [
        ("Steve", "invalid"),
        ("console", "invalid"),
        ("Alex", "approved"),
        ("Alex", "invalid"),
    ]
    assert token not in str(audit.events)


@pytest.mark.parametrize(
    "args",
    [
        ("approve",),
        ("deny",),
        ("approve", "short"),
        ("approve", "a" * 43, "BAD OPTION"),
        ("deny", "a" * 43, "yes"),
        ("approve", "a" * 43, "yes", "more"),
        ("approve", "a" * 42 + "!"),
    ],
)
def test_malformed_answers_get_the_usage_line(args: tuple[str, ...]) -> None:
    commands = ApprovalCommands(ApprovalBroker(), messages=ApprovalMessages)
    assert commands.handle(_command(ALEX, *args)).lines[0].template == USAGE
