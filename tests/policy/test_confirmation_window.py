"""A turn that others wait behind holds them at most one confirmation's timeout: its later
prompts get only what is left of that window, and none once it is spent."""

from __future__ import annotations

import asyncio

import pytest
from support.fake_link import FakeLink

from bridge.link.messages import ApprovalShow, ApprovalShowResult, PlayerRef, WireModel
from bridge.policy.approvals import ApprovalBroker, ApprovalError, ApprovalOutcome
from bridge.turns.confirm_window import ConfirmationWindow

from .test_approvals import BUTTONS, DISPLAY, PROMPT, SUBJECT, WAIT

TARGETS = [
    PlayerRef(uuid=f"0b6f7c1e-2d3a-4e5f-8a9b-0c1d2e3f4a5{n}", name=f"Target{n}") for n in range(4)
]


class World:
    def __init__(self) -> None:
        self.now = 1000.0
        self.waiting: set[str] = set()
        self.running = {"t-1": "public"}
        self.window = ConfirmationWindow(
            window_s=60.0,
            lane_of=self.running.get,
            has_waiting=lambda lane: lane in self.waiting,
        )
        self.broker = ApprovalBroker(clock=lambda: self.now)
        self.broker.window = self.window
        self.shown: list[ApprovalShow] = []
        self.up = asyncio.Event()
        self.link = FakeLink({"approval.show": self._show})

    def _show(self, data: WireModel) -> WireModel:
        assert isinstance(data, ApprovalShow)
        self.shown.append(data)
        self.up.set()
        return ApprovalShowResult(shown=True)

    async def prompt(
        self, target: PlayerRef, turn: str = "t-1"
    ) -> tuple[ApprovalShow, asyncio.Task[ApprovalOutcome]]:
        """Open a prompt of ``turn`` to ``target`` and answer it once it is up."""
        self.up.clear()
        task = asyncio.create_task(
            self.broker.request(
                self.link,
                target=target,
                subject=SUBJECT,
                prompt=PROMPT,
                buttons=BUTTONS,
                display=DISPLAY,
                turn=turn,
            )
        )
        await asyncio.wait_for(self.up.wait(), WAIT)
        return self.shown[-1], task


async def test_with_others_waiting_later_prompts_get_what_is_left_of_one_timeout() -> None:
    w = World()
    w.waiting.add("public")
    show, task = await w.prompt(TARGETS[0])
    assert show.expires_ms == 60_000  # the first prompt keeps its own timeout
    w.now += 45  # answered after 45 s
    w.broker.answer(TARGETS[0], "approve", show.token)
    await asyncio.wait_for(task, WAIT)

    show, task = await w.prompt(TARGETS[1])
    assert show.expires_ms == 15_000  # only what is left of the window
    w.now += 15
    w.broker.answer(TARGETS[1], "deny", show.token)
    await asyncio.wait_for(task, WAIT)

    with pytest.raises(ApprovalError, match="waiting for the assistant"):
        await w.broker.request(
            w.link, target=TARGETS[2], subject=SUBJECT, prompt=PROMPT, buttons=BUTTONS, turn="t-1"
        )
    assert len(w.shown) == 2  # the refused prompt was never shown

    # Nobody waits any more: the turn's prompts keep their own timeout again.
    w.waiting.clear()
    show, task = await w.prompt(TARGETS[2])
    assert show.expires_ms == 60_000
    task.cancel()


async def test_a_turn_nobody_waits_behind_and_a_prompt_outside_a_turn_are_not_bound() -> None:
    w = World()
    show, task = await w.prompt(TARGETS[0])
    w.now += 59
    w.broker.answer(TARGETS[0], "approve", show.token)
    await asyncio.wait_for(task, WAIT)
    show, task = await w.prompt(TARGETS[1])
    assert show.expires_ms == 60_000
    task.cancel()
    w.waiting.add("public")
    show, task = await w.prompt(TARGETS[2], turn="t-gone")  # a turn no lane runs
    assert show.expires_ms == 60_000
    task.cancel()
