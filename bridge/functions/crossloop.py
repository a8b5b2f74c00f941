"""Await a coroutine that runs on another thread's event loop, with honest cancellation.

`asyncio.run_coroutine_threadsafe` plus `wrap_future` returns as soon as the caller is
cancelled, while the other loop is still unwinding. The runtime needs the opposite: when a
workflow is cancelled, its result may only be reported once the isolate has been stopped and
every host operation has seen its cancellation. `run_on` cancels the remote task and then
waits for it to finish.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


async def run_on(loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, T]) -> T:
    """Run `work` on `loop` (another thread's) and return its result here.

    Cancelling the caller cancels the remote task and waits until it has finished.
    """
    caller = asyncio.get_running_loop()
    if loop is caller:
        return await work
    outcome: asyncio.Future[T] = caller.create_future()
    remote: list[asyncio.Task[T]] = []

    def settle(task: asyncio.Task[T]) -> None:
        if outcome.done():
            return
        if task.cancelled():
            outcome.cancel()
        elif (error := task.exception()) is not None:
            outcome.set_exception(error)
        else:
            outcome.set_result(task.result())

    def report(task: asyncio.Task[T]) -> None:
        try:
            caller.call_soon_threadsafe(settle, task)
        except RuntimeError:
            pass  # the caller's loop is closed; nobody is waiting any more

    def start() -> None:
        task = loop.create_task(work)
        remote.append(task)
        task.add_done_callback(report)

    def cancel_remote() -> None:
        # FIFO: `start` ran before this callback, so the task exists.
        remote[0].cancel()

    loop.call_soon_threadsafe(start)
    try:
        return await asyncio.shield(outcome)
    except asyncio.CancelledError:
        if not outcome.done():
            loop.call_soon_threadsafe(cancel_remote)
            while not outcome.done():
                try:
                    await asyncio.shield(outcome)
                except asyncio.CancelledError:
                    continue
                except Exception:  # noqa: BLE001 - the remote error is moot once cancelled
                    break
        raise
