"""A stdio MCP server runs confined like a Function worker: no_new_privs, Landlock (reading the
system, Python, its folder and what the owner lists; writing only its own folder), and as
``nobody`` when the bridge runs as root. The toolbox's ``probe`` tool is the stand-in for a
hostile server's code (a server's code is the owner's choice, so it needs no escape hatch).

The configuration folder is made readable and writable by anyone, so only the confinement can
refuse: before it, every attempt below succeeded (the server ran as the bridge's user)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.mcp.connection import ServerConnection
from bridge.mcp.stdio_transport import ChildStderr

from .harness import TOOLBOX, harness, mcp_config, stdio_server


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A configuration folder anyone may enter, read and write (no DAC refusal to hide behind),
    with the bridge's secrets in it."""
    folder = Path(tempfile.mkdtemp(prefix="mcp-confined-"))
    try:
        folder.chmod(0o777)
        (folder / ".env").write_text("OPENAI_API_KEY=sk-confined-test\n")
        (folder / "link.token").write_text("t" * 43)
        (folder / "data").mkdir()
        (folder / "data" / "audit.sqlite3").write_bytes(b"SQLite format 3\x00")
        (folder / "workspace").mkdir()
        (folder / "workspace" / "AGENTS.md").write_text("# rules\n")
        for path in folder.rglob("*"):
            path.chmod(0o777 if path.is_dir() else 0o666)
        yield folder
    finally:
        shutil.rmtree(folder)


async def test_a_stdio_server_reads_and_writes_only_what_it_may(open_folder: Path) -> None:
    own = open_folder / "mcp" / "wiki"
    agents = open_folder / "workspace" / "AGENTS.md"
    secrets = [open_folder / ".env", open_folder / "link.token", open_folder / "data/audit.sqlite3"]
    planted = [open_folder / "workspace/planted.md", open_folder / "data/planted", secrets[0]]
    async with harness(open_folder, mcp_config({"wiki": stdio_server()})) as h:
        connection = await h.ready("wiki")
        arguments = {
            "read": [*map(str, secrets), TOOLBOX, str(agents)],
            "write": [*map(str, planted), str(own / "cache.json")],
            "signal_pid": os.getpid(),
        }
        outcome = await h.call("mcp__wiki__probe", arguments)
        assert outcome.ok, outcome
        text = outcome.result["text"]
        said = json.loads(text[text.index("{") : text.rindex("}") + 1])
        report = connection.stderr.confinement
        status = h.clients.status()[0]
    assert report is not None and report["no_new_privs"] == "on", report
    assert report["landlock"].startswith("on (ABI ")
    # .env, link.token, data/: refused; the toolbox (listed in read:) and its cwd: allowed.
    assert said["read"] == ["refused: EACCES"] * 3 + ["allowed", "allowed"], said
    # workspace/, data/, .env: refused; its own folder: allowed.
    assert said["write"] == ["refused: EACCES"] * 3 + ["allowed"], said
    assert not (open_folder / "workspace" / "planted.md").exists()
    assert said["signal"] == "refused: EPERM"  # outside its Landlock domain, or another user
    if report["user"].startswith("on"):
        assert said["uid"] != os.geteuid()
        assert "confinement" not in status
    else:  # not root, or the program lives where nobody cannot run it: said in the status
        assert said["uid"] == os.geteuid()
        assert f"confinement: user {report['user']}" in status


async def test_a_layer_that_is_unavailable_is_said_once_in_the_log_and_always_in_the_status(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = mcp_config({"wiki": stdio_server()})
    connection = ServerConnection(
        "wiki", config.servers["wiki"], workspace=tmp_path, changed=lambda: None
    )
    connection.stderr = ChildStderr(
        confinement={
            "no_new_privs": "on",
            "landlock": "unavailable: landlock_create_ruleset failed (ENOSYS)",
            "user": "on (nobody, uid 65534)",
        }
    )
    with caplog.at_level(logging.WARNING, logger="bridge.mcp"):
        connection._note_confinement()
        connection._note_confinement()
    [line] = [r.getMessage() for r in caplog.records]
    assert line == (
        "MCP server wiki runs with a confinement: landlock unavailable: "
        "landlock_create_ruleset failed (ENOSYS)"
    )
    assert connection.confinement_note == line.removeprefix("MCP server wiki runs with a ")


async def test_a_script_named_in_args_is_readable_and_its_folder_is_not(open_folder: Path) -> None:
    """``python3 server.py`` with no ``read:`` starts: the file its args name is readable (it
    failed with "Permission denied" on its own script), the files beside it are not."""
    sibling = str(Path(TOOLBOX).with_name("silent.py"))
    async with harness(open_folder, mcp_config({"wiki": stdio_server(read=[])})) as h:
        await h.ready("wiki")
        outcome = await h.call("mcp__wiki__probe", {"read": [TOOLBOX, sibling], "write": []})
    assert outcome.ok, outcome
    text = outcome.result["text"]
    said = json.loads(text[text.index("{") : text.rindex("}") + 1])
    assert said["read"] == ["allowed", "refused: EACCES"], said
