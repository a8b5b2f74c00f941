"""``mineclaw-bridge serve`` with the application: a bad wake pattern stops the start."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [("x*", "matches an empty message"), ("(open", "wake_pattern")],
)
async def test_serve_refuses_a_wake_pattern_that_would_wake_on_everything_or_not_compile(
    tmp_path: Path, pattern: str, reason: str
) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.yml").write_text(f'schema: 1\nchat:\n  wake_pattern: "{pattern}"\n')
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bridge", "serve", "--config", str(config), "--port", "0",
        cwd=REPO, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    stdout, stderr = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 1, (stdout, stderr)
    assert b"wake_pattern" in stderr and reason.encode() in stderr
    assert b"listening on" not in stdout
