"""Client-side deadlines for database operations.

A server-side timeout (``statement_timeout``) cannot fire inside a backend that hangs (paused,
stuck on a dead disk, its machine frozen), and TCP keepalives see a healthy peer, since the
server's kernel still answers for it. So the bridge bounds each operation itself: one watchdog
thread keeps the deadlines of the operations in flight, and when one passes it shuts down the
operation's socket (``shutdown(2)`` on a duplicate of its descriptor: the descriptor itself stays
the connection's, so it is never closed under the thread using it nor reused meanwhile). The
blocked call then returns at once with a connection error, the connection is broken and the next
operation opens a new one.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)


class Guard:
    """One operation's deadline. ``fired``: the deadline passed and its socket was shut down."""

    __slots__ = ("deadline", "fileno", "fired", "done")

    def __init__(self, deadline: float, fileno: int) -> None:
        self.deadline = deadline
        self.fileno = fileno
        self.fired = False
        self.done = False


class Watchdog:
    """The deadlines of operations in flight, watched by one daemon thread (started on first
    use)."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._heap: list[tuple[float, int, Guard]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    @contextmanager
    def guard(self, fileno: int, seconds: float) -> Iterator[Guard]:
        """Shut down socket ``fileno`` if the block is still running ``seconds`` from now."""
        guard = Guard(time.monotonic() + seconds, fileno)
        with self._lock:
            heapq.heappush(self._heap, (guard.deadline, next(self._order), guard))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="database-deadlines", daemon=True
                )
                self._thread.start()
            self._lock.notify()
        try:
            yield guard
        finally:
            with self._lock:  # after this the watchdog never touches the socket
                guard.done = True

    def lift(self, guard: Guard) -> None:
        """No deadline for the rest of ``guard``'s block (a migration may rightly take long)."""
        with self._lock:
            guard.done = True

    def _run(self) -> None:
        with self._lock:
            while True:
                while self._heap and self._heap[0][2].done:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._lock.wait()
                    continue
                left = self._heap[0][0] - time.monotonic()
                if left > 0:
                    self._lock.wait(left)
                    continue
                _, _, guard = heapq.heappop(self._heap)
                guard.fired = True
                _shut_down(guard.fileno)


def _shut_down(fileno: int) -> None:
    try:
        duplicate = os.dup(fileno)
    except OSError:
        return  # already closed: nothing is waiting on it
    try:
        sock = socket.socket(fileno=duplicate)
    except OSError:
        os.close(duplicate)
        return
    with sock:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError as exc:  # not connected any more: the operation is failing already
            log.debug("database deadline: shutting down the socket failed: %s", exc)


WATCHDOG = Watchdog()
"""The process's one watchdog."""
