"""The decision contract: slots without a queue, the timeout, the circuit, one request per
decision, malformed answers, and what is never turned into fallback work."""

from __future__ import annotations

import asyncio

import pytest

from bridge.decisions.answer import MalformedAnswer, parse_answer
from bridge.decisions.contract import (
    Decided,
    DecisionContract,
    DecisionPermissionError,
    DecisionUnavailable,
    ModelReply,
    Refused,
    Unavailable,
)

YES = '{"answer": true, "confidence": 0.9, "reason": "asks the assistant"}'


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def reply(text: str = YES) -> ModelReply:
    return ModelReply(text, input_tokens=50, output_tokens=12, estimated=False)


class Asker:
    """Counts requests; answers with ``text``, raises ``error``, or waits for ``release``."""

    def __init__(self, text: str = YES, error: Exception | None = None) -> None:
        self.text = text
        self.error = error
        self.calls = 0
        self.release: asyncio.Event | None = None
        self.started = asyncio.Event()

    async def __call__(self) -> ModelReply:
        self.calls += 1
        self.started.set()
        if self.release is not None:
            await self.release.wait()
        if self.error is not None:
            raise self.error
        return reply(self.text)


async def test_four_in_flight_and_no_queue() -> None:
    contract = DecisionContract()
    askers = [Asker() for _ in range(4)]
    release = asyncio.Event()
    tasks = []
    for asker in askers:
        asker.release = release
        claim = contract.claim()
        assert claim is not None
        tasks.append(asyncio.create_task(contract.run(claim, asker)))
    # The fifth finds no slot at once: no waiting, the caller's fallback decides.
    assert contract.claim() is None and contract.unavailable_now() == "no free slot"
    assert contract.in_flight == 4
    release.set()
    outcomes = await asyncio.gather(*tasks)
    assert all(isinstance(o, Decided) and o.answer.answer for o in outcomes)
    assert contract.in_flight == 0 and contract.claim() is not None


async def test_a_decision_that_does_not_answer_in_time_is_a_failure() -> None:
    contract = DecisionContract(timeout_s=0.01)
    asker = Asker()
    asker.release = asyncio.Event()  # never set: the model never answers
    claim = contract.claim()
    assert claim is not None
    outcome = await contract.run(claim, asker)
    assert isinstance(outcome, Unavailable) and "no answer in" in outcome.reason
    assert contract.in_flight == 0 and asker.calls == 1  # asked once, never again


async def test_three_failures_in_a_row_open_the_circuit_for_ten_seconds() -> None:
    clock = Clock()
    contract = DecisionContract(clock=clock)
    failing = Asker(error=DecisionUnavailable("busy: scripted"))
    for _ in range(3):
        claim = contract.claim()
        assert claim is not None
        assert isinstance(await contract.run(claim, failing), Unavailable)
    assert failing.calls == 3  # one request per decision: no retries
    assert contract.circuit_open and contract.claim() is None
    assert contract.unavailable_now() == "circuit open"
    clock.now += 9.9
    assert contract.claim() is None
    clock.now += 0.2
    # Half open: one more failure opens it again at once...
    claim = contract.claim()
    assert claim is not None
    assert isinstance(await contract.run(claim, failing), Unavailable)
    assert contract.circuit_open
    clock.now += 10.1
    # ...and one success closes it.
    claim = contract.claim()
    assert claim is not None
    assert isinstance(await contract.run(claim, Asker()), Decided)
    for _ in range(2):
        claim = contract.claim()
        assert claim is not None
        await contract.run(claim, failing)
    assert not contract.circuit_open  # two failures after a success: still closed


async def test_a_success_resets_the_count() -> None:
    contract = DecisionContract(clock=Clock())
    failing = Asker(error=DecisionUnavailable("broken"))
    for asker in (failing, failing, Asker(), failing, failing):
        claim = contract.claim()
        assert claim is not None
        await contract.run(claim, asker)
    assert not contract.circuit_open


@pytest.mark.parametrize(
    "text",
    [
        "",
        "yes",
        "```json\n" + YES + "\n```",
        "Sure! " + YES,
        '{"answer": "true", "confidence": 0.9, "reason": "x"}',
        '{"answer": 1, "confidence": 0.9, "reason": "x"}',
        '{"answer": true, "confidence": 1.5, "reason": "x"}',
        '{"answer": true, "confidence": -0.1, "reason": "x"}',
        '{"answer": true, "confidence": "high", "reason": "x"}',
        '{"answer": true, "reason": "no confidence"}',
        '{"answer": true, "confidence": 0.9, "reason": "x", "start_turn": true}',
        '{"answer": true, "confidence": 0.9, "reason": "' + "x" * 400 + '"}',
        "[true, 0.9]",
        YES + YES,
        '{"answer": true, "confidence": NaN, "reason": "x"}',
    ],
)
async def test_a_malformed_answer_counts_as_unavailable(text: str) -> None:
    contract = DecisionContract()
    claim = contract.claim()
    assert claim is not None
    outcome = await contract.run(claim, Asker(text))
    assert isinstance(outcome, Unavailable) and outcome.reason.startswith("malformed answer")
    # The reply was paid for: its usage travels with the failure.
    assert outcome.reply is not None and outcome.reply.output_tokens == 12
    with pytest.raises(MalformedAnswer) as caught:
        parse_answer(text)
    assert "x" * 50 not in str(caught.value)  # never quotes model text


def test_the_strict_answer_is_accepted_with_whitespace_around() -> None:
    answer = parse_answer("\n  " + YES + "  \n")
    assert (answer.answer, answer.confidence, answer.reason) == (True, 0.9, "asks the assistant")
    assert parse_answer('{"answer": false, "confidence": 0}').reason == ""


async def test_a_permission_error_is_refused_not_a_fallback() -> None:
    contract = DecisionContract()
    claim = contract.claim()
    assert claim is not None
    outcome = await contract.run(claim, Asker(error=DecisionPermissionError("refused (401)")))
    assert isinstance(outcome, Refused) and contract.in_flight == 0


async def test_a_cancelled_decision_propagates_and_gives_its_slot_back() -> None:
    contract = DecisionContract(clock=Clock())
    asker = Asker()
    asker.release = asyncio.Event()
    claim = contract.claim()
    assert claim is not None
    task = asyncio.create_task(contract.run(claim, asker))
    await asker.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert contract.in_flight == 0
    # Not a failure of the model: three cancellations do not open the circuit.
    for _ in range(3):
        claim = contract.claim()
        assert claim is not None
        task = asyncio.create_task(contract.run(claim, asker))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert not contract.circuit_open


async def test_a_bug_in_the_port_is_a_failure_not_a_crash() -> None:
    contract = DecisionContract()
    claim = contract.claim()
    assert claim is not None
    outcome = await contract.run(claim, Asker(error=RuntimeError("bug")))
    assert isinstance(outcome, Unavailable) and outcome.reason == "internal error"


async def test_a_slot_claimed_for_a_task_cancelled_before_it_ran_can_be_given_back() -> None:
    contract = DecisionContract()
    claim = contract.claim()
    assert claim is not None
    task = asyncio.create_task(contract.run(claim, Asker()))
    task.cancel()  # before its first step: run's own cleanup never runs
    with pytest.raises(asyncio.CancelledError):
        await task
    assert contract.in_flight == 1
    contract.release(claim)
    contract.release(claim)  # once only
    assert contract.in_flight == 0
