"""Usage the ledger refused (its database lost or hung), written without waiting for the next
record: when a server links to this bridge (its lease was just read, so the store answers) and
before the bridge gives its servers up. A provider bills what it served whether the store was
there or not; kept only in this process, it would leave with it."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from bridge.app.wiring.runtime import Runtime
from bridge.executors import Pool, run_in

log = logging.getLogger(__name__)


async def flush_kept_usage(runtimes: Iterable[Runtime]) -> int:
    """Write each runtime's kept usage (runtimes sharing budgets are written once); how many
    are still kept. Each flush stops at the first refusal, so a hung store costs one record's
    deadline, not one per kept usage."""
    budgets = {id(b): b for r in runtimes if (b := r.budgets) is not None}
    left = 0
    for book in budgets.values():
        left += await run_in(Pool.STORE, book.flush_unrecorded)
    if left:
        log.warning("%d usage records are still kept in memory (the ledger refused them)", left)
    return left
