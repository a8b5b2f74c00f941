"""Listen decisions' model requests run on an event loop of their own, in one thread, never on
the loop that answers chat.

Why: with a decision model configured, every decision's HTTP exchange (building the request,
two socket sends to the provider, reading and parsing the stream, closing it) ran on the chat
path's loop, about 10 ms of it per decision on a loaded 2-core machine, where a send that wakes
another process is often preempted. At 20 decisions a second those steps sat between verdicts:
the verdict p99 was 1.86x to 2.21x the bare echo's (bench/listen_bench.py) against a budget of
1.5x. Here the chat path only hands the request over and gets the answer back.

The thread's provider clients are twins of the served ones (same settings, their own
connections: an httpx client belongs to one loop), made on first use and closed with the loop.
Cancelling the awaiting task (listen mode off, the contract's timeout, shutdown) cancels the
request in the thread.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TypeVar

from bridge.app.serving.served import ModelStream
from bridge.providers.client import ProviderClient
from bridge.providers.settings import ModelSettings

T = TypeVar("T")
TWINS_KEPT = 4
"""Clients kept per served client (a reload makes new ones; the oldest twin is closed)."""


class DecisionLoop:
    def __init__(self, name: str = "listen-decisions") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._twins: OrderedDict[int, tuple[ProviderClient, ProviderClient]] = OrderedDict()

    def _started(self) -> asyncio.AbstractEventLoop:
        if self._loop is not None:
            return self._loop
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()

        self._thread = threading.Thread(target=serve, name=self._name, daemon=True)
        self._thread.start()
        ready.wait()
        self._loop = loop
        return loop

    async def run(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run ``work()`` on the decision loop and return what it returns (or raise what it
        raises). Cancelling the caller cancels it there."""
        future = asyncio.run_coroutine_threadsafe(_call(work), self._started())
        return await asyncio.wrap_future(future)

    def stream(self, client: ProviderClient, model: ModelSettings) -> ModelStream:
        """A stream of ``client``'s twin on the decision loop: call it there only."""
        key = id(client)
        kept = self._twins.get(key)
        if kept is None or kept[0] is not client:
            kept = (client, client.twin())
            self._twins[key] = kept
            while len(self._twins) > TWINS_KEPT:
                _, (_, old) = self._twins.popitem(last=False)
                asyncio.get_running_loop().create_task(old.aclose())
        self._twins.move_to_end(key)
        return functools.partial(kept[1].stream, model=model)

    async def aclose(self) -> None:
        """Close the twins and stop the thread (a later `run` starts it again)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        twins = [twin for _, twin in self._twins.values()]
        self._twins.clear()

        async def close_twins() -> None:
            # Requests their callers cancelled may still be ending here: let them end first.
            running = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            for twin in twins:
                await twin.aclose()

        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(close_twins(), loop))
        loop.call_soon_threadsafe(loop.stop)
        await asyncio.to_thread(thread.join)
        loop.close()
        self._loop = self._thread = None


async def _call(work: Callable[[], Awaitable[T]]) -> T:
    return await work()
