"""Which unauthenticated connections the link keeps (sans-I/O, with a manual clock)."""

from __future__ import annotations

import logging

import pytest

from bridge.link.admission import IDLE_GRACE_S, Admission, RefusalLog


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_past_the_address_cap_the_oldest_of_that_address_goes_and_the_newcomer_stays() -> None:
    clock = Clock()
    gate: Admission[str] = Admission(max_total=10, max_per_address=3, monotonic=clock)
    for name in ("a1", "a2", "a3"):
        assert gate.admit(name, "A") == []
        gate.upgraded(name)
    assert gate.admit("b1", "B") == []
    assert gate.admit("a4", "A") == ["a1"]
    assert gate.admit("a5", "A") == ["a2"]
    assert "a5" in gate and "b1" in gate and "a1" not in gate
    assert len(gate) == 4


def test_an_idle_connection_past_the_grace_goes_before_an_older_one_that_spoke() -> None:
    clock = Clock()
    gate: Admission[str] = Admission(max_total=10, max_per_address=2, monotonic=clock)
    gate.admit("spoke", "A")
    gate.upgraded("spoke")
    clock.now += 0.1
    gate.admit("silent", "A")
    clock.now += IDLE_GRACE_S
    assert gate.admit("new", "A") == ["silent"]


def test_the_total_cap_takes_from_the_busiest_address_not_from_another() -> None:
    gate: Admission[str] = Admission(max_total=4, max_per_address=4, monotonic=Clock())
    gate.admit("plugin", "10.0.0.2")
    for n in range(3):
        gate.admit(f"flood{n}", "10.0.0.9")
    for n in range(3, 20):
        assert gate.admit(f"flood{n}", "10.0.0.9") == [f"flood{n - 3}"]
    assert "plugin" in gate


def test_released_connections_no_longer_count() -> None:
    gate: Admission[str] = Admission(max_total=2, max_per_address=2, monotonic=Clock())
    gate.admit("a", "A")
    gate.admit("b", "A")
    gate.release("a")
    gate.release("a")  # twice is harmless (authenticated, then closed)
    assert gate.admit("c", "A") == []
    assert len(gate) == 2


def test_refusals_log_the_first_of_each_reason_then_one_summary(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    clock = Clock()
    refusals = RefusalLog(logging.getLogger("test.refusals"), interval=10, monotonic=clock)
    for n in range(500):
        refusals.note("hellos refused", "hello from %s refused", n)
        refusals.note("closed past the caps")
    clock.now += 10
    line = refusals.summarise()
    assert line == (
        "link: unauthenticated connections in the last 10 s: "
        "500 closed past the caps, 500 hellos refused"
    )
    assert [r.getMessage() for r in caplog.records] == ["hello from 0 refused", line]
    assert refusals.summarise() is None  # a quiet interval says nothing
