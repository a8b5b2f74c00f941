"""Listen decisions stay off the chat path's event loop: their model requests run on a loop of
their own in another thread (cancelling the caller cancels them there), and their usage is
recorded in batches by one worker thread, never one thread and one commit per decision."""

from __future__ import annotations

import asyncio
import threading

import pytest

from bridge.app.requests import server_budget
from bridge.app.requests.decision_loop import DecisionLoop
from bridge.app.requests.listen_decisions import DECISION_PURPOSE
from bridge.app.requests.server_budget import BatchedSettle
from bridge.decisions.contract import ModelReply
from bridge.policy.budgets import NOTHING_HELD
from bridge.providers.client import ProviderClient
from bridge.store.usage import SERVER

from .conftest import App
from .test_listen_decisions import deciding, tokens_of  # noqa: F401  (the fixture)

REPLY = ModelReply('{"answer": false, "confidence": 0.9, "reason": "banter"}', 100, 5, False)


async def test_work_runs_on_another_thread_and_its_answer_or_error_comes_back() -> None:
    loop = DecisionLoop()
    try:

        async def where() -> int:
            await asyncio.sleep(0)
            return threading.get_ident()

        assert await loop.run(where) != threading.get_ident()

        async def fails() -> None:
            raise LookupError("no such model")

        with pytest.raises(LookupError, match="no such model"):
            await loop.run(fails)
    finally:
        await loop.aclose()


async def test_cancelling_the_caller_cancels_the_request_on_the_decision_loop() -> None:
    loop = DecisionLoop()
    started, cancelled = threading.Event(), threading.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    try:
        caller = asyncio.create_task(loop.run(forever))
        await asyncio.to_thread(started.wait)
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller
        await asyncio.to_thread(cancelled.wait)
    finally:
        await loop.aclose()
    assert cancelled.is_set()


async def test_a_served_client_gets_one_twin_of_its_own_on_the_decision_loop(
    deciding: App,  # noqa: F811
) -> None:
    served, model = deciding.runtime.served.one_off_route("local/m2")
    loop = DecisionLoop()
    try:

        async def twins() -> tuple[object, object]:
            first = loop.stream(served, model)
            second = loop.stream(served, model)
            return first.func.__self__, second.func.__self__  # type: ignore[attr-defined]

        first, second = await loop.run(twins)
        assert first is second and first is not served
        assert isinstance(first, ProviderClient) and first.settings == served.settings
    finally:
        await loop.aclose()


async def test_usage_waits_for_a_batch_written_by_one_worker_thread(
    deciding: App,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runtime = deciding.runtime
    threads: list[int] = []
    settle = server_budget.settle_for_server

    def recording(*args: object, **kwargs: object) -> None:
        threads.append(threading.get_ident())
        settle(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(server_budget, "settle_for_server", recording)
    batch = BatchedSettle(runtime, purpose=DECISION_PURPOSE, what="listen decision")
    batch.FLUSH_S = 3600  # only flush() writes in this test
    before = tokens_of(deciding, SERVER, DECISION_PURPOSE)
    for _ in range(3):
        batch.add(NOTHING_HELD, "local/m2", REPLY)
    await asyncio.sleep(0)
    assert batch.waiting == 3 and threads == []
    await batch.flush()
    assert batch.waiting == 0
    assert len(threads) == 3 and len(set(threads)) == 1
    assert threads[0] != threading.get_ident()
    assert tokens_of(deciding, SERVER, DECISION_PURPOSE) == before + 3 * 105
