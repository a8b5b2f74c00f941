"""Which of a stdio server's messages reach the SDK's session, and how much of the loop its
output may take.

The session spends about a millisecond of the event loop on each message it is handed (a task
per notification, validation, dispatch), so a server writing notifications as fast as its pipe
takes them held every player (a witness verdict 3.6x slower, for as long as the server
liked). Only what the bridge asked for, or uses, goes on:

- an answer (result or error) to a request the bridge sent and is still waiting for; in an
  answer to ``tools/list`` each tool's ``outputSchema`` is dropped: the SDK would check every
  result against it with plain jsonschema on the loop (Python's backtracking ``re`` for its
  patterns, its meta-schema check uncached), and the bridge reads results as text, never by
  that schema;
- ``notifications/tools/list_changed``, once until the bridge lists the tools again (more
  say nothing new);
- ``notifications/progress`` of a request still waiting, at most one per ``PROGRESS_S`` for
  each (the asker's action bar shows no more);
- the server's own requests (sampling, roots, elicitation, ping: each answered by the SDK,
  mostly with a refusal), at most ``REQUESTS_BURST`` at once and ``REQUESTS_PER_S`` after.

The rest (log messages, resource notifications, answers to nothing, progress of nothing) is
dropped where it is read. Reading itself is paced: ``Pace`` gives the reader a share of the
loop's time (``SHARE``), and when the lines it parses cost more, the reader waits before the
next chunk, so the child waits on its full pipe instead of the players waiting on the loop.

The stdio transport applies both where it reads; a streamable HTTP server's streams get the same
through ``AdmittedRead`` and ``AdmittedWrite`` (its messages were parsed by the SDK's HTTP
client, so each dropped one is counted as ``DROPPED_S`` of the share, and a reader that waits
leaves the rest in the connection).
"""

from __future__ import annotations

import time
from typing import Any, Final

import anyio
import anyio.lowlevel
from mcp.types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

LIST_CHANGED: Final = "notifications/tools/list_changed"
PROGRESS: Final = "notifications/progress"
CANCELLED: Final = "notifications/cancelled"
PROGRESS_S: Final = 0.5
REQUESTS_PER_S: Final = 2.0
REQUESTS_BURST: Final = 10.0
SHARE: Final = 0.2
"""The part of the loop's time a server's lines may take to read and parse, over time."""
BURST_S: Final = 0.05
"""Parse time a reader may spend at once before the share applies (a large answer's parse)."""
HANDED_S: Final = 0.001
"""What the session's handling of one message handed on is counted as (it runs in the
session's tasks, where the reader cannot time it)."""
DROPPED_S: Final = 0.0002
"""What the SDK's HTTP client's parse of one message dropped here is counted as."""


class Admission:
    """The bridge's side of one stdio session: what it asked, and what it lets through."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self.waiting: set[int | str] = set()
        """The ids of the requests sent and not yet answered."""
        self._relist_due = False
        self._listings: set[int | str] = set()
        self._progress_at: dict[int | str, float] = {}
        self._requests = REQUESTS_BURST
        self._requests_at = clock()
        self.dropped = 0

    def sent(self, message: Any) -> None:
        if isinstance(message, JSONRPCRequest):
            self.waiting.add(message.id)
            if message.method == "tools/list":
                self._relist_due = False
                self._listings.add(message.id)
        elif isinstance(message, JSONRPCNotification) and message.method == CANCELLED:
            params = message.params if isinstance(message.params, dict) else {}
            cancelled = params.get("requestId")
            if isinstance(cancelled, int | str):
                self.answered(cancelled)  # an answer coming now answers no one

    @property
    def listing(self) -> bool:
        """Whether a ``tools/list`` is waiting for its answer (a page of it may be long)."""
        return bool(self._listings)

    def answered(self, request_id: int | str) -> None:
        self.waiting.discard(request_id)
        self._listings.discard(request_id)
        self._progress_at.pop(request_id, None)

    def admit(self, message: Any) -> bool:
        """Whether ``message`` (parsed from the server) goes on to the session."""
        passed = self._judged(message)
        if not passed:
            self.dropped += 1
        return passed

    def _judged(self, message: Any) -> bool:
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            if message.id not in self.waiting:
                return False
            if message.id in self._listings and isinstance(message, JSONRPCResponse):
                _without_output_schemas(message.result)
            self.answered(message.id)
            return True
        if isinstance(message, JSONRPCNotification):
            if message.method == LIST_CHANGED:
                due, self._relist_due = self._relist_due, True
                return not due
            if message.method == PROGRESS:
                return self._progress(message.params)
            return False
        if isinstance(message, JSONRPCRequest):
            now = self._clock()
            self._requests = min(
                REQUESTS_BURST, self._requests + (now - self._requests_at) * REQUESTS_PER_S
            )
            self._requests_at = now
            if self._requests < 1:
                return False
            self._requests -= 1
            return True
        return False

    def _progress(self, params: Any) -> bool:
        token = params.get("progressToken") if isinstance(params, dict) else None
        if isinstance(token, bool) or not isinstance(token, int | str):
            return False
        if token not in self.waiting:
            return False
        now = self._clock()
        if now - self._progress_at.get(token, float("-inf")) < PROGRESS_S:
            return False
        self._progress_at[token] = now
        return True


def _without_output_schemas(result: Any) -> None:
    tools = result.get("tools") if isinstance(result, dict) else None
    for tool in tools if isinstance(tools, list) else ():
        if isinstance(tool, dict):
            tool.pop("outputSchema", None)


class Pace:
    """A budget of the loop's time for one reader: ``SHARE`` of the time that passes, at most
    ``BURST_S`` saved up. ``spent`` returns how long to wait before reading on."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._credit = BURST_S
        self._at = clock()

    def spent(self, seconds: float) -> float:
        now = self._clock()
        self._credit = min(BURST_S, self._credit + (now - self._at) * SHARE) - seconds
        self._at = now
        return 0.0 if self._credit >= 0 else -self._credit / SHARE


class AdmittedRead:
    """A transport's read stream with ``Admission`` applied (exceptions pass as they are)."""

    def __init__(self, inner: Any, admission: Admission) -> None:
        self._inner = inner
        self._admission = admission
        self._pace = Pace()

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            message = getattr(item, "message", None)
            if message is None or self._admission.admit(message):
                return item
            wait = self._pace.spent(DROPPED_S)
            if wait > 0:
                await anyio.sleep(wait)
            else:
                await anyio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class AdmittedWrite:
    """A transport's write stream that tells ``Admission`` what the bridge sent."""

    def __init__(self, inner: Any, admission: Admission) -> None:
        self._inner = inner
        self._admission = admission

    async def send(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if message is not None:
            self._admission.sent(message)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> AdmittedWrite:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
