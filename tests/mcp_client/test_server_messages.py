"""What of a stdio server's output reaches the session, and the reader's share of the loop:
decided on parsed messages and a clock the test moves, so each rule is seen exactly."""

from __future__ import annotations

from typing import Any

from mcp.types import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from bridge.mcp.server_messages import (
    BURST_S,
    PROGRESS_S,
    REQUESTS_BURST,
    REQUESTS_PER_S,
    SHARE,
    Admission,
    Pace,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def request(request_id: int, method: str = "tools/call") -> JSONRPCRequest:
    return JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params={})


def notification(method: str, **params: Any) -> JSONRPCNotification:
    return JSONRPCNotification(jsonrpc="2.0", method=method, params=params or None)


def answer(request_id: int) -> JSONRPCResponse:
    return JSONRPCResponse(jsonrpc="2.0", id=request_id, result={})


def test_only_answers_to_waiting_requests_pass_each_once() -> None:
    admission = Admission()
    assert not admission.admit(answer(1))
    admission.sent(request(1))
    assert admission.admit(answer(1))
    assert not admission.admit(answer(1))  # answered already
    admission.sent(request(2))
    admission.sent(notification("notifications/cancelled", requestId=2))
    assert not admission.admit(answer(2))  # cancelled: its answer answers no one


def test_list_changed_passes_once_until_the_tools_are_listed_again() -> None:
    admission = Admission()
    changed = notification("notifications/tools/list_changed")
    assert [admission.admit(changed) for _ in range(3)] == [True, False, False]
    admission.sent(request(7, "tools/list"))
    assert [admission.admit(changed) for _ in range(2)] == [True, False]


def test_progress_passes_for_a_waiting_request_at_most_once_per_interval() -> None:
    clock = Clock()
    admission = Admission(clock)
    progress = notification("notifications/progress", progressToken=3, progress=1)
    assert not admission.admit(progress)  # no such request
    admission.sent(request(3))
    assert [admission.admit(progress) for _ in range(3)] == [True, False, False]
    clock.now += PROGRESS_S
    assert admission.admit(progress)
    admission.admit(answer(3))
    clock.now += PROGRESS_S
    assert not admission.admit(progress)
    assert not admission.admit(notification("notifications/progress", progressToken=True))


def test_other_notifications_never_pass_and_server_requests_are_rationed() -> None:
    clock = Clock()
    admission = Admission(clock)
    for method in ("notifications/message", "notifications/resources/updated", "x/y"):
        assert not admission.admit(notification(method, data="x"))
    passed = [admission.admit(request(9, "ping")) for _ in range(50)]
    assert passed.count(True) == REQUESTS_BURST
    clock.now += 1.0
    passed = [admission.admit(request(9, "sampling/createMessage")) for _ in range(50)]
    assert passed.count(True) == REQUESTS_PER_S
    assert admission.dropped == 3 + 2 * 50 - REQUESTS_BURST - REQUESTS_PER_S


def test_the_reader_waits_once_its_parsing_passes_its_share_of_the_time() -> None:
    clock = Clock()
    pace = Pace(clock)
    assert pace.spent(BURST_S / 2) == 0.0  # a burst is free
    wait = pace.spent(BURST_S)  # half a burst over
    assert abs(wait - BURST_S / 2 / SHARE) < 1e-9
    clock.now += wait  # waiting that long earns exactly the debt back
    assert pace.spent(0.0) == 0.0
    clock.now += 3600  # saved credit is capped at one burst
    assert pace.spent(BURST_S) == 0.0 and pace.spent(0.001) > 0
