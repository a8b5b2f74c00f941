"""Kill-safety: a child archiving turns is SIGKILLed at random points, again and again.

After every kill the archive must hold every acknowledged turn, whole and unchanged, and no
partial turn (a header without all its items, or items without a header). On both backends: on
PostgreSQL the kill drops the connection mid-transaction, and the server must roll it back.
"""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.storage_backends import Backend

from .archive_writer_child import ITEMS_PER_TURN, expected_items

CHILD = Path(__file__).with_name("archive_writer_child.py")
KILLS = 15


def read_line(proc: subprocess.Popen[bytes], timeout: float) -> bytes:
    """One line of the child's stdout, waiting at most `timeout` seconds for it."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"child wrote nothing for {timeout}s"
    return proc.stdout.readline()


def run_until_killed(
    backend: Backend, first: int, acks_before_kill: int, delay: float
) -> list[str]:
    target = backend.target
    where = target.dsn if target.dsn else str(target.data_dir / "archive.sqlite3")
    environ = dict(os.environ, MINECLAW_TEST_DB_PASSWORD=target.password or "")
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), str(where), str(first)], stdout=subprocess.PIPE, env=environ
    )
    acked: list[str] = []
    try:
        while len(acked) < acks_before_kill:
            line = read_line(proc, timeout=60)
            assert line, "child exited before it was killed"
            acked.append(line.decode().strip())
        # Not synchronisation: a random pause puts the kill at a random point of the next turn.
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        # Acks written between our last read and the kill also count as committed.
        rest, _ = proc.communicate(timeout=60)
        acked.extend(rest.decode().split())
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=60)
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    return acked


def test_sigkill_at_random_points_leaves_only_whole_turns(backend: Backend) -> None:
    backend.data_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random()
    acked: list[str] = []
    next_index = 0
    for _ in range(KILLS):
        acked += run_until_killed(backend, next_index, rng.randint(1, 4), rng.uniform(0, 0.012))
        # Resume after the last turn on disk (it may be one the child committed but never acked).
        [(count,)] = backend.execute("SELECT COUNT(*) FROM turns")
        orphans = backend.execute(
            "SELECT COUNT(*) FROM turn_items WHERE turn_id NOT IN (SELECT turn_id FROM turns)"
        )
        assert orphans == [(0,)]
        next_index = count

    with backend.archive() as archive:
        turns = archive.all_turns()  # raises if any stored turn is missing items
    stored = [t.turn_id for t in turns]
    assert set(acked) <= set(stored)
    assert stored == [f"turn-{i:06d}" for i in range(len(stored))]
    for archived in turns:
        assert len(archived.items) == ITEMS_PER_TURN
        assert archived.items == expected_items(archived.turn_id)
