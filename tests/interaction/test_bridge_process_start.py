"""A bridge process whose start is cancelled (a soak's restart cut short when its faults stop)
is killed by the start itself: nobody else holds it, and it outlived the soak before."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from .processes import BridgeProcess

# Stands in for `serve`: writes its pid into the folder's FIFO, then never prints "listening on".
NEVER_READY = (
    sys.executable,
    "-c",
    "import os, pathlib, sys, time;"
    " pathlib.Path(sys.argv[-1], 'pid').write_text(str(os.getpid())); time.sleep(600)",
)


async def test_a_cancelled_start_kills_the_process_it_started(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    pid_file = config / "pid"
    os.mkfifo(pid_file)  # read below until the stand-in has written its pid: no polling
    starting = asyncio.create_task(BridgeProcess.start(config, command=NEVER_READY))
    try:
        pid = int(await asyncio.wait_for(asyncio.to_thread(pid_file.read_text), 60))
    except TimeoutError:
        os.close(os.open(pid_file, os.O_WRONLY | os.O_NONBLOCK))  # frees the reading thread
        raise
    assert not starting.done()
    starting.cancel()
    await asyncio.gather(starting, return_exceptions=True)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return
    os.kill(pid, 9)
    raise AssertionError(f"the process {pid} outlived its cancelled start")
