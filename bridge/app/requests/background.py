"""Tasks a part of the application starts and does not await: listen decisions, conversation
titles, a file saved after the answer went out. Each is kept referenced until it ends (the event
loop holds only a weak reference), an unexpected failure is logged with what it was, and the
owner can wait for them (tests, the benches) or cancel them on shutdown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class BackgroundTasks:
    """The running tasks of one owner; ``what`` names them in the log (``"listen decision"``)."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._tasks: set[asyncio.Task[Any]] = set()

    def start(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._ended)
        return task

    def _ended(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("%s failed", self._what, exc_info=task.exception())

    def cancel(self) -> None:
        """Cancel every running task (each ends at its next step)."""
        for task in list(self._tasks):
            task.cancel()

    async def settled(self) -> None:
        """Wait until every task started so far, and any they started, has ended."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def aclose(self) -> None:
        """Cancel what runs and wait for it to end."""
        self.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
