"""``bridge.managed``: the plugin core in the testkit JVM installs the checkout's wheel into a venv
of its own from a local wheelhouse (``wheelhouse.py``: nothing downloaded), inits the folder,
runs ``serve`` as its child, links to it and gets a question answered; ``/mineclaw bridge
status`` shows it running, and the server's stop ends the child. The failure lines and the
state machine are JUnit's (``ManagedBridgeTest``, with fake Pythons)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.interaction.processes import TestkitProcess, free_port

from .clean_venv import oldest_python
from .wheelhouse import dependency_wheelhouse

pytestmark = pytest.mark.jvm

# A hang guard for the install (about a minute here), never a measure.
INSTALL_TIMEOUT_S = 900


async def test_the_plugin_installs_its_bridge_offline_runs_it_and_stops_it(
    wheel: Path, tmp_path: Path
) -> None:
    await managed_bridge_answers(tmp_path, wheel.name.split("-")[1], "--managed-wheel", str(wheel))


async def managed_bridge_answers(
    tmp_path: Path, version: str, *wheel_args: str, core_from: Path | None = None
) -> None:
    """The testkit's core (or ``core_from``'s) runs a managed bridge of ``version`` from the
    wheel ``wheel_args`` name, offline; a question is answered, the status line read, and the
    server's stop ends the child."""
    data = tmp_path / "plugins" / "Mineclaw"
    data.mkdir(parents=True)
    (data / "wheelhouse").symlink_to(dependency_wheelhouse(), target_is_directory=True)
    url = f"ws://127.0.0.1:{free_port()}/link"
    testkit = await TestkitProcess.start(
        url, data / "link.token",
        "--managed-data", str(data), *wheel_args,
        "--managed-python", str(oldest_python()), core_from=core_from,
    )  # fmt: skip
    try:
        await testkit.wait_event(lambda e: e.get("event") == "link.up", timeout=INSTALL_TIMEOUT_S)
        assert (data / "config.yml").is_file() and (data / "link.token").stat().st_mode & 0o077 == 0
        assert "[bridge] listening on " + url in "\n".join(testkit.stderr.lines)
        await testkit.send(
            {"op": "player.add", "name": "Steve", "permissions": ["mineclaw.command.chat"]}
        )
        await testkit.send({"op": "chat", "player": "Steve", "text": "@ai hello", "ref": "c1"})
        # The question went through the managed bridge (no provider configured: it says so).
        await testkit.wait_event(
            lambda e: e.get("event") == "message" and "not configured yet" in e.get("text", "")
        )
        await testkit.send(
            {"op": "command", "sender": "console", "args": ["bridge", "status"], "ref": "s1"}
        )
        status = await testkit.wait_event(
            lambda e: e.get("event") == "message" and e.get("to") == "console"
            and "managed bridge" in e.get("text", "")
        )  # fmt: skip
        found = re.fullmatch(
            rf"managed bridge {re.escape(version)}: running \(pid (\d+)\), up .+, 0 restarts",
            status["text"],
        )
        assert found, status
        pid = int(found.group(1))
    finally:
        code = await testkit.shutdown()
    assert code == 0
    # The server's stop ended the child (SIGTERM; serve exits by itself).
    assert not Path(f"/proc/{pid}").exists() or _zombie(pid)
    assert "did not stop within" not in "\n".join(testkit.stderr.lines)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except OSError:
        return True
