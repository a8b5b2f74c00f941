"""The [DONE]-latency benchmark runs: real server holding the body open, real client and engine.

No timing is asserted here (the machine is shared); the figure is the benchmark's to print.
"""

from __future__ import annotations

import pytest

from bench import done_latency
from bridge.providers import client as client_module


async def test_every_turn_gets_its_final_event_while_the_body_stays_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With the drain's bound lifted, a client that waited for the body would never finish.
    monkeypatch.setattr(client_module, "DRAIN_TIMEOUT_S", 3600.0)
    to_final, to_reply = await done_latency.measure(3)
    assert len(to_final) == 3 and len(to_reply) == 3
    assert all(0 <= final <= reply for final, reply in zip(to_final, to_reply, strict=True))
