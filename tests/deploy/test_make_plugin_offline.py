"""`make plugin` where paper-api cannot be had (no PaperMC repository, no shared jar folder,
nothing in the local Maven repository) says so in one line, as `make java` does, instead of
Maven's raw resolution error. The "PaperMC repository" here is a closed loopback port."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAKE_LINE = re.compile(r"make(\[\d+\])?: ")


def _outside_make() -> dict[str, str]:
    """The environment without what an enclosing `make test` passes down, so the inner make
    runs as a user's would (its level and flags changed its lines in CI)."""
    return {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_make_plugin_without_paper_api_prints_one_line(tmp_path: Path) -> None:
    make = shutil.which("make")
    assert make is not None, "make is needed to build the plugin"
    result = subprocess.run(
        [make, "--no-print-directory", "plugin", "SHARED_PAPER=",
         f"M2_REPO={tmp_path / 'm2'}",
         # Maven itself offline on the same empty repository: what it would say is the raw
         # resolution error the line replaces.
         f"MVN=mvn -B -q -o -Dmaven.repo.local={tmp_path / 'm2'} -f plugin-java/pom.xml",
         f"PAPERMC_PROBE=http://127.0.0.1:{_closed_port()}/maven-metadata.xml"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, env=_outside_make(),
    )  # fmt: skip
    assert result.returncode != 0
    assert result.stdout == ""
    # make's own last word ("make: *** ... Error 1", "make[1]: ..." when nested) is not ours.
    ours = [line for line in result.stderr.splitlines() if not MAKE_LINE.match(line)]
    assert len(ours) == 1, result.stderr
    assert ours[0].startswith("not built: the plugin jar needs paper-api")
    assert "[ERROR]" not in result.stderr and "BUILD FAILURE" not in result.stderr
