"""``serve`` waits for a database that does not answer yet.

A bridge started before its PostgreSQL server (both at boot, or the database restarting) would
otherwise exit at once. Instead the whole start is tried again with a growing pause (1, 2, 4 …
up to 30 s), one line per attempt, until ``storage.start_wait_s`` has passed; then serve exits
with ``EXIT_UNAVAILABLE`` so a service manager starts it again later. Only a database that did
not answer is waited for: a refusal (a wrong password, a missing database, a schema a newer
bridge migrated) is final and reported at once. Nothing listens meanwhile, so the plugin keeps
retrying its link and no chat is taken in that cannot be stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from bridge.control import load_control_plane
from bridge.errors import StoreError
from bridge.store.database import caused_by_unreachable

T = TypeVar("T")
MAX_PAUSE_S = 30.0


class StorageNotReady(StoreError):
    """The database did not answer within ``storage.start_wait_s``."""


def pause_before(attempt: int) -> float:
    """The pause after failed attempt number ``attempt`` (1-based)."""
    return min(float(2 ** (attempt - 1)), MAX_PAUSE_S)


def open_waiting_for_storage(
    open_once: Callable[[], T],
    config_dir: Path,
    *,
    say: Callable[[str], None],
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    """``open_once()``, again after each failure to reach the database, within the folder's
    ``storage.start_wait_s``; other errors pass through at once."""
    started = clock()
    attempt = 0
    while True:
        attempt += 1
        try:
            return open_once()
        except StoreError as exc:
            if not caused_by_unreachable(exc):
                raise
            # Read again each time: the owner may fix the folder while the bridge waits.
            wait_s = load_control_plane(config_dir).config.storage.start_wait_s
            elapsed = clock() - started
            pause = pause_before(attempt)
            if elapsed + pause > wait_s:
                raise StorageNotReady(
                    f"{exc}; gave up after {attempt} attempt(s) in {elapsed:.0f} s "
                    f"(storage.start_wait_s: {wait_s})"
                ) from exc
            say(
                f"storage not reachable yet (attempt {attempt}): {exc}; trying again in "
                f"{pause:.0f} s (for up to {wait_s} s: storage.start_wait_s)"
            )
            sleep(pause)
