"""The end-to-end suite's own test: its waits must not depend on the machine's speed.

Two busy processes keep the cores occupied while the end-to-end test that failed on a loaded
machine (a cleared session across two restarts: a restarted bridge is met by the plugin's
reconnect back-off, whose pause grows with the time the start took) runs in a pytest of its
own. It must pass as it does on an idle machine. Only that test runs, to keep the cost modest;
the whole suite under `stress` is for a person with time (see tests/interaction/README.md).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .processes import REPO, require_testkit_jar

pytestmark = pytest.mark.jvm

BUSY_PROCESSES = 2
UNDER_LOAD = [
    "tests/interaction/test_restart_e2e.py::test_a_cleared_session_stays_cleared_across_a_restart"
]
SUITE_BOUND_S = 1800.0  # a hang guard only: the inner tests bound each of their waits


@contextlib.contextmanager
def busy(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` processes spinning on a core each until the block ends."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True:\n    pass"]) for _ in range(count)
    ]
    try:
        yield spinners
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def test_a_restart_test_passes_with_every_core_busy(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    require_testkit_jar()
    storage = str(request.config.getoption("storage"))
    with busy(BUSY_PROCESSES) as spinners:
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             f"--storage={storage}", f"--basetemp={tmp_path / 'inner'}", *UNDER_LOAD],
            cwd=REPO, capture_output=True, text=True, timeout=SUITE_BOUND_S,
        )  # fmt: skip
        assert all(spinner.poll() is None for spinner in spinners), "the load stopped early"
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in result.stdout and "failed" not in result.stdout
