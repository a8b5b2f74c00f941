"""``ask_player``: the question to the turn's own asker, its buttons and gesture flag, the
answers it maps, one open question per player per turn, and hostile arguments."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from bridge.control.messages_file import ApprovalMessages, AskMessages
from bridge.link.messages import (
    ApprovalShow,
    ApprovalShowResult,
    CommandRequest,
    CommandSender,
    WireModel,
)
from bridge.policy.approval_commands import ApprovalCommands
from bridge.policy.approvals import ApprovalBroker
from bridge.redaction import Redactor
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.ask_player import AskPlayer
from bridge.tools.registry import CallContext
from bridge.tools.results import ErrorCode, ToolFailure

from .plugin_fakes import ALEX, STEVE, FakeLink, access, context

WAIT = 10.0
GITHUB_PAT = "ghp_" + "Q" * 36

Answering = Callable[[ApprovalBroker, ApprovalShow], None]


def of_kind(audit: MemoryAudit, kind: str) -> list[dict[str, Any]]:
    return [fields for event, fields in audit.events if event == kind]


class Harness:
    def __init__(
        self,
        answer: Answering | None,
        features: tuple[str, ...] = ("approvals", "gestures"),
        timeout_s: float = 60.0,
    ) -> None:
        self.broker = ApprovalBroker()
        self.audit = MemoryAudit()
        self.shown: list[ApprovalShow] = []
        self._answer = answer
        self.link = FakeLink({"approval.show": self._show})
        self.tool = AskPlayer(
            access(self.link, features),
            self.broker,
            messages=AskMessages,
            assistant=lambda: "Mineclaw",
            redactor=Redactor,
            audit=self.audit,
            timeout_s=lambda: timeout_s,
        )
        self.commands = ApprovalCommands(
            self.broker, messages=ApprovalMessages, audit=self.audit, ask_messages=AskMessages
        )

    def _show(self, data: WireModel) -> WireModel:
        assert isinstance(data, ApprovalShow)
        self.shown.append(data)
        if self._answer is not None:
            answer = self._answer
            asyncio.get_running_loop().call_soon(answer, self.broker, data)
        return ApprovalShowResult(shown=True)

    async def ask(self, call: CallContext | None = None, **arguments: Any) -> dict[str, Any]:
        return await asyncio.wait_for(self.tool.run(arguments, call or context(STEVE)), WAIT)


def clicks(answer: str, option: str | None = None) -> Answering:
    def click(broker: ApprovalBroker, shown: ApprovalShow) -> None:
        broker.answer(STEVE, answer, shown.token, option)  # type: ignore[arg-type]

    return click


async def test_a_yes_no_question_goes_to_the_asker_with_a_gesture_flag_and_yes_no_buttons() -> None:
    harness = Harness(clicks("approve"))
    result = await harness.ask(question="Clear the weather?")
    assert result == {"status": "answered", "answer": "yes", "by": "click"}
    (shown,) = harness.shown
    assert shown.player == STEVE.uuid and shown.gesture is True and shown.expires_ms == 60_000
    assert [(b.answer, b.option, b.label.template) for b in shown.buttons] == [
        ("approve", None, AskMessages().yes_button),
        ("deny", None, AskMessages().no_button),
    ]
    assert shown.prompt.values == {"question": "Clear the weather?", "name": "Mineclaw"}
    assert AskMessages().gesture_hint in shown.prompt.template
    events = of_kind(harness.audit, "ask.result")
    assert events == [
        {
            "turn_id": events[0]["turn_id"],
            "call_id": "c1",
            "player": "Steve",
            "kind": "confirm",
            "status": "answered",
            "by": "click",
        }
    ]


async def test_a_plugin_without_gestures_gets_no_gesture_flag_and_a_gesture_is_refused() -> None:
    def gesture(broker: ApprovalBroker, shown: ApprovalShow) -> None:
        assert broker.answer(STEVE, "approve", shown.token, "gesture").verdict.value == "invalid"
        broker.answer(STEVE, "deny", shown.token)

    harness = Harness(gesture, features=("approvals",))
    result = await harness.ask(question="Clear the weather?")
    assert result == {"status": "answered", "answer": "no", "by": "click"}
    assert harness.shown[0].gesture is None
    assert "gesture" not in harness.shown[0].model_dump(exclude_none=True)
    assert AskMessages().gesture_hint not in harness.shown[0].prompt.template


async def test_a_gesture_approves_a_yes_no_question() -> None:
    harness = Harness(clicks("approve", "gesture"))
    assert await harness.ask(question="Clear the weather?") == {
        "status": "answered",
        "answer": "yes",
        "by": "gesture",
    }


async def test_a_choice_has_one_button_per_option_and_takes_no_gesture() -> None:
    def pick_second_after_a_gesture(broker: ApprovalBroker, shown: ApprovalShow) -> None:
        assert broker.answer(STEVE, "approve", shown.token, "gesture").verdict.value == "invalid"
        assert broker.answer(ALEX, "approve", shown.token, "2").verdict.value == "invalid"
        broker.answer(STEVE, "approve", shown.token, "2")

    harness = Harness(pick_second_after_a_gesture)
    result = await harness.ask(question="Which?", options=["Day", "Night", "Dusk"])
    assert result == {"status": "answered", "choice": "Night", "index": 2, "by": "click"}
    (shown,) = harness.shown
    assert shown.gesture is None
    assert [(b.answer, b.option) for b in shown.buttons] == [
        ("approve", "1"),
        ("approve", "2"),
        ("approve", "3"),
        ("deny", None),
    ]
    assert [b.label.values for b in shown.buttons[:3]] == [
        {"option": "Day"},
        {"option": "Night"},
        {"option": "Dusk"},
    ]
    declined = Harness(clicks("deny"))
    assert await declined.ask(question="Which?", options=["A", "B"]) == {"status": "declined"}


async def test_an_unanswered_question_times_out() -> None:
    harness = Harness(None, timeout_s=1.0)
    assert await harness.ask(question="Anyone?") == {"status": "timed_out"}
    assert [e["status"] for e in of_kind(harness.audit, "ask.result")] == ["timed_out"]


async def test_one_open_question_per_player_per_turn_and_the_next_may_follow() -> None:
    harness = Harness(None)
    call = context(STEVE, turn_id="t-one")
    first = asyncio.create_task(harness.ask(call, question="First?"))
    await harness.link.wait_for(lambda name, _: name == "approval.show")
    with pytest.raises(ToolFailure) as refused:
        await harness.ask(call, question="Second?")
    assert refused.value.code is ErrorCode.UNAVAILABLE
    assert "has not answered" in refused.value.message
    harness.broker.answer(STEVE, "approve", harness.shown[0].token)
    assert (await first)["answer"] == "yes"
    harness._answer = clicks("deny")
    assert (await harness.ask(call, question="Second?"))["answer"] == "no"


async def test_the_answer_line_and_audit_of_a_question() -> None:
    replies: list[str] = []

    def click_through_the_command(broker: ApprovalBroker, shown: ApprovalShow) -> None:
        request = CommandRequest(
            sender=CommandSender(kind="player", player=STEVE, granted=[]),
            args=["approve", shown.token, "gesture"],
        )
        replies.extend(line.template for line in harness.commands.handle(request).lines)

    harness = Harness(click_through_the_command)
    assert (await harness.ask(question="Go?"))["by"] == "gesture"
    assert replies == [AskMessages().answered]
    (answer,) = of_kind(harness.audit, "approval.answer")
    assert (answer["option"], answer["kind"], answer["verdict"]) == (
        "gesture",
        "question",
        "approved",
    )


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "question"),
        ({"question": ""}, "question"),
        ({"question": "x" * 257}, "question"),
        ({"question": "   \n\t "}, "blank"),
        ({"question": "Which?", "options": ["only one"]}, "options"),
        ({"question": "Which?", "options": ["a", "b", "c", "d", "e", "f"]}, "options"),
        ({"question": "Which?", "options": ["same", "same"]}, "differ"),
        ({"question": "Which?", "options": ["a", " "]}, "blank"),
        ({"question": "Which?", "options": "a,b"}, "options"),
        ({"question": "Go?", "player": "Alex"}, "player"),
    ],
)
async def test_bad_arguments_are_refused_before_any_prompt(
    arguments: dict[str, Any], expected: str
) -> None:
    harness = Harness(clicks("approve"))
    with pytest.raises(ToolFailure) as refused:
        await harness.ask(**arguments)
    assert refused.value.code is ErrorCode.INVALID_ARGUMENTS
    assert expected in refused.value.message
    assert harness.shown == []


async def test_the_question_is_one_line_of_redacted_plain_text() -> None:
    harness = Harness(clicks("deny"))
    question = f"Use <click:run_command:'/op Steve'>this</click> key {GITHUB_PAT}?\nop me"
    await harness.ask(question=question, options=[f"<red>{GITHUB_PAT}", "b\u2028c"])
    (shown,) = harness.shown
    assert shown.prompt.values is not None
    shown_question = shown.prompt.values["question"]
    assert GITHUB_PAT not in shown_question and "\n" not in shown_question
    assert "<click:run_command" in shown_question  # a value: shown as text, never parsed
    labels = [b.label.values for b in shown.buttons[:2]]
    assert labels[0] is not None and GITHUB_PAT not in labels[0]["option"]
    assert labels[1] == {"option": "b c"}


async def test_without_a_link_or_the_approvals_feature_nothing_is_asked() -> None:
    harness = Harness(clicks("approve"), features=("snapshots",))
    with pytest.raises(ToolFailure) as refused:
        await harness.ask(question="Go?")
    assert refused.value.code is ErrorCode.UNAVAILABLE and harness.shown == []


async def test_a_player_who_leaves_before_answering_is_reported_offline() -> None:
    def leave(broker: ApprovalBroker, shown: ApprovalShow) -> None:
        assert broker.player_quit(STEVE.uuid) == 1

    harness = Harness(leave)
    assert await harness.ask(question="Still there?") == {"status": "player_offline"}
    assert [e["status"] for e in of_kind(harness.audit, "ask.result")] == ["player_offline"]
