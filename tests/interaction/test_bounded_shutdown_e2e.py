"""SIGTERM of a bridge whose database hangs mid-turn, end to end on the tests' own PostgreSQL:
every backend of the bridge's database paused (SIGSTOP) while a turn streams.

Each database operation has its own deadline, but the shutdown is a series of them (the stopped
turn, the audit log's last batch, the lease connection, connections opened anew), and while the
process lives it keeps its sessions and the leases of its servers (issue 39: still alive 40 s
after SIGTERM). Now the whole shutdown is bounded by ``storage.stop_wait_s``: past it the
process says so and exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest

from tests.postgres_server import PostgresServer

from .test_cut_turn_e2e import bridge_mid_turn

pytestmark = pytest.mark.jvm


async def test_sigterm_exits_at_the_bound_while_every_backend_of_its_database_hangs(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    paused: list[int] = []
    async with bridge_mid_turn(tmp_path / "a", postgres_server, "  stop_wait_s: 1\n") as cut:
        try:
            with postgres_server.admin() as conn:
                rows = conn.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = %s", (cut.database,)
                ).fetchall()
            assert rows
            for (pid,) in rows:
                os.kill(pid, signal.SIGSTOP)
                paused.append(pid)
            assert await cut.bridge.interrupt(signal.SIGTERM) == 1
            stderr = cut.bridge.stderr.tail(200)
            assert "the shutdown took longer than 1 s (storage.stop_wait_s)" in stderr
        finally:
            for pid in paused:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)
