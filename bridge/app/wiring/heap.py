"""Keeping the garbage collector off the event loop's back once the bridge has started.

After start-up the process holds some fifty thousand objects that live as long as it does:
library modules, pydantic validators, JSON schemas, the control plane. A full collection walks
all of them, and on our two-core test machine that took about 70 ms, on the event loop, at a
moment the interpreter picks (after enough allocations). Freezing them moves them out of the
collector's generations for good, so later full collections only walk what was created since:
sessions, turns, link frames. Nothing frozen is ever freed, which is right for start-up state
and the reason this runs once, at the end of start-up, not after every reload.
"""

from __future__ import annotations

import gc


def settle_startup_heap() -> int:
    """Collect what start-up left behind, then freeze the rest; returns how many were frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
