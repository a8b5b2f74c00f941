"""`serve` warns when the link listens beyond this machine; this is the check it uses."""

from __future__ import annotations

import pytest

from bridge.cli.serve import is_loopback_host


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.1", "localhost", "::1", "[::1]"])
def test_loopback_hosts_are_recognised(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.org", "10.0.0.1"])
def test_other_hosts_are_not_loopback(host: str) -> None:
    assert not is_loopback_host(host)
