"""``mineclaw-bridge serve`` as its own process on a free port, as an owner starts it."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


async def start_serve(
    config: Path, *, env: Mapping[str, str] | None = None
) -> asyncio.subprocess.Process:
    """The started process, its stdout and stderr piped; ``env`` replaces the environment."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bridge", "serve", "--config", str(config), "--port", "0",
        cwd=REPO, env=None if env is None else dict(env), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
