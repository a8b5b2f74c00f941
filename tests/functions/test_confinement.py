"""A Function worker is confined by the OS, not only by V8 (issue 38).

Each layer is proven from inside a real worker: `escape_probe.py` stands in for native code
after a V8 escape and tries what such code would, once before the seccomp filter (the user,
no_new_privs and Landlock alone) and once fully confined. Before, every attempt succeeded: the
worker ran as the bridge's user (root here) without seccomp, no_new_privs or Landlock.

The probe runs only in a worker this test starts itself, with the switch in its environment;
the bridge starts every worker with an empty one.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from bridge.cli.serve import not_dumpable_line
from bridge.functions.pool_settings import PoolSettings, WorkerLimits
from bridge.functions.worker_main import PROBE_ENV
from bridge.functions.worker_pool import WorkerEngine
from bridge.functions.worker_process import worker_argv
from bridge.functions.worker_protocol import HEADER_BYTES, Ready, body_length, decode_from_worker
from bridge.store.audit import AuditLog

from .support import WAIT_S

PROBE = Path(__file__).with_name("escape_probe.py")
LAYERS = ("no_new_privs", "landlock", "user", "descriptors", "seccomp")


async def run_worker(env: dict[str, str]) -> tuple[Ready, dict[str, dict[str, str]]]:
    """Start a worker as the pool does (same command line), but with `env`; its `ready` and
    what the probe reported at each stage."""
    process = await asyncio.create_subprocess_exec(
        *worker_argv(WorkerLimits()),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        close_fds=True,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        header = await asyncio.wait_for(process.stdout.readexactly(HEADER_BYTES), WAIT_S)
        ready = decode_from_worker(await process.stdout.readexactly(body_length(header)))
        assert isinstance(ready, Ready), ready
        process.stdin.close()  # the worker shuts down
        _, stderr = await asyncio.wait_for(process.communicate(), WAIT_S)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    stages = {}
    for line in stderr.decode().splitlines():
        if line.startswith("PROBE "):
            _, stage, results = line.split(" ", 2)
            stages[stage] = json.loads(results)
    return ready, stages


@pytest.fixture
def targets(tmp_path: Path) -> dict[str, Any]:
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.yml").write_text("schema: 1\n")
    audit = AuditLog.in_data_dir(config / "data")
    audit.record("turn.start", {"player": "Steve"})
    audit.close()
    return {"config": config, "db": config / "data" / "audit.sqlite3"}


async def test_each_layer_refuses_what_an_escaped_script_would_try(
    targets: dict[str, Any],
) -> None:
    assert os.geteuid() == 0, "the tests run as root (as in CI): the user layer is tested"
    connections: list[object] = []
    server = await asyncio.start_server(
        lambda r, w: connections.append(w), host="127.0.0.1", port=0
    )
    port = server.sockets[0].getsockname()[1]
    db_size = targets["db"].stat().st_size
    env = {
        PROBE_ENV: str(PROBE),
        "PROBE_BRIDGE_PID": str(os.getpid()),
        "PROBE_CONFIG_FILE": str(targets["config"] / "config.yml"),
        "PROBE_NEW_FILE": str(targets["config"] / "planted"),
        "PROBE_AUDIT_DB": str(targets["db"]),
        "PROBE_PORT": str(port),
    }
    try:
        ready, stages = await run_worker(env)
    finally:
        server.close()
        await server.wait_closed()

    layers = ready.confinement
    assert list(layers) == list(LAYERS), layers
    assert all(state == "on" or state.startswith("on (") for state in layers.values()), layers
    assert layers["user"].startswith("on (nobody")

    before, confined = stages["before_seccomp"], stages["confined"]
    # The user, no_new_privs and Landlock alone: no file outside Python and the libraries, no
    # /proc of the bridge, no signal to it.
    assert before["uid"] == "65534" and before["no_new_privs"] == "1"
    for name in (
        "read_bridge_environment",
        "open_config",
        "create_file",
        "truncate_audit_database",
        "rename_config",
        "signal_the_bridge",
    ):
        assert before[name].startswith("refused"), (name, before[name])
    # Fully confined: seccomp refuses every one of them, and sockets, fork and exec.
    for name, outcome in confined.items():
        if name in ("uid", "no_new_privs", "signal_self", "signal_own_thread"):
            continue
        assert outcome == "refused: EPERM", (name, outcome)
    assert {"open_socket", "connect_loopback", "fork", "exec"} <= set(confined)
    assert confined["signal_self"] == confined["signal_own_thread"] == "allowed"
    # Nothing happened outside: the files are as they were, nobody connected.
    assert not (targets["config"] / "planted").exists()
    assert (targets["config"] / "config.yml").read_text() == "schema: 1\n"
    assert targets["db"].stat().st_size == db_size
    with AuditLog.in_data_dir(targets["config"] / "data") as audit:
        assert [event.kind for event in audit.events()] == ["turn.start"]
    assert connections == []


async def test_the_probe_runs_only_from_the_tests_folder(tmp_path: Path) -> None:
    elsewhere = tmp_path / "escape_probe.py"
    shutil.copy(PROBE, elsewhere)
    ready, stages = await run_worker({PROBE_ENV: str(elsewhere)})
    assert stages == {}
    assert ready.confinement["seccomp"] == "on"


async def test_the_pool_starts_workers_with_no_probe() -> None:
    # Whatever the bridge's own environment holds, a pool worker's is empty: the switch cannot
    # reach a worker the bridge starts (and a Function only runs JavaScript in the isolate).
    os.environ[PROBE_ENV] = str(PROBE)
    try:
        pool = await WorkerEngine.start(PoolSettings(workers=1, spare=0))
    finally:
        del os.environ[PROBE_ENV]
    try:
        [pid] = await pool.worker_pids()
        with open(f"/proc/{pid}/environ", "rb") as environ:
            assert environ.read() == b""
        assert pool.confinement["seccomp"] == "on"
    finally:
        await asyncio.wait_for(pool.aclose(), WAIT_S)


async def test_the_bridge_makes_itself_not_dumpable() -> None:
    # In a process of its own: the test process must stay as it is.
    code = (
        "import ctypes; from bridge.functions.worker_confinement import not_dumpable, "
        "BRIDGE_LAYERS; state = not_dumpable(); "
        "print(state, BRIDGE_LAYERS['not_dumpable'], ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(process.communicate(), WAIT_S)
    assert out.decode().split() == ["on", "on", "0"]  # PR_GET_DUMPABLE: 0


def test_the_startup_line_says_what_not_dumpable_means() -> None:
    # "bridge process not dumpable: on" explained nothing to an owner reading the log.
    line = not_dumpable_line("on")
    assert "cannot read its memory or environment" in line and "provider keys" in line
    failed = not_dumpable_line("unavailable: prctl(PR_SET_DUMPABLE) failed (EPERM)")
    assert "could not be made not dumpable" in failed and "may read" in failed
