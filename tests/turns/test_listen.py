"""Listen mode follows the server instance, not the link or a reload."""

from __future__ import annotations

import pytest

from bridge.errors import TurnError
from bridge.turns.listen import ListenMode


def test_starts_off_and_needs_a_server() -> None:
    listen = ListenMode()
    assert not listen.on
    with pytest.raises(TurnError, match="connected server"):
        listen.set(True)
    assert not listen.on


def test_toggle_reports_changes() -> None:
    listen = ListenMode()
    assert listen.bind_instance("i-1") is False
    assert listen.set(True) is True
    assert listen.set(True) is False
    assert listen.on
    assert listen.set(False) is True
    assert not listen.on


def test_reconnect_of_same_instance_keeps_it_on() -> None:
    listen = ListenMode()
    listen.bind_instance("i-1")
    listen.set(True)
    assert listen.bind_instance("i-1") is False
    assert listen.on


def test_new_instance_switches_it_off() -> None:
    listen = ListenMode()
    listen.bind_instance("i-1")
    listen.set(True)
    assert listen.bind_instance("i-2") is True
    assert not listen.on
    assert listen.instance_id == "i-2"
    assert listen.bind_instance("i-3") is False  # was already off: nothing to announce


def test_forward_mode() -> None:
    listen = ListenMode()
    listen.bind_instance("i-1")
    assert listen.forward_mode(wake_pattern_set=False) == "prefixed"
    assert listen.forward_mode(wake_pattern_set=True) == "all"
    listen.set(True)
    assert listen.forward_mode(wake_pattern_set=False) == "all"
