"""``serve`` raises its own open-file soft limit to the hard limit (real process, /proc)."""

from __future__ import annotations

import re
import resource
from pathlib import Path

import pytest

from .processes import BridgeProcess, free_port


def open_file_limits(pid: int) -> tuple[str, str]:
    limits = Path(f"/proc/{pid}/limits")
    if not limits.is_file():
        pytest.fail("this test reads /proc/<pid>/limits (Linux)")
    found = re.search(r"^Max open files\s+(\S+)\s+(\S+)", limits.read_text(), re.MULTILINE)
    assert found, limits.read_text()
    return found.group(1), found.group(2)


async def test_serve_starts_with_a_low_soft_limit_and_raises_it_to_the_hard_one(
    tmp_path: Path,
) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= 256:
        pytest.fail(f"the hard open-file limit {hard} leaves nothing to raise")
    bridge = await BridgeProcess.start(tmp_path / "config", port=free_port(), open_files=256)
    try:
        soft_now, hard_now = open_file_limits(bridge.process.pid)
        # With no hard limit the bridge asks for 2^20 (Linux refuses an unlimited soft one).
        expected = str(1 << 20) if hard_now == "unlimited" else hard_now
        assert soft_now == expected != "256", (soft_now, hard_now)
    finally:
        await bridge.kill()
