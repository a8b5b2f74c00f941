"""Start-up state is frozen out of the collector, so a later full collection only walks what the
bridge created since. Run in a child process: freezing is for the whole interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import gc, json
import bridge.app.wiring.runtime  # what serve loads: pydantic models, schemas, libraries
from bridge.app.wiring.heap import settle_startup_heap

def tracked() -> int:
    return sum(len(gc.get_objects(generation)) for generation in range(3))

before = tracked()
frozen = settle_startup_heap()
garbage = [[n] for n in range(1000)]
print(json.dumps({"before": before, "frozen": frozen, "after": tracked()}))
"""


def test_start_up_objects_leave_the_collector_s_generations() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120, check=True
    )
    counts = json.loads(done.stdout)
    assert counts["frozen"] > 10_000  # the libraries and models serve loads
    assert counts["frozen"] >= counts["before"] * 0.9
    # What is left to walk is what was created after start-up (the 1000 lists and a few more).
    assert 1000 <= counts["after"] < 1000 + counts["frozen"] // 10
