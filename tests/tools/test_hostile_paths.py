"""Every path that tries to leave the workspace, or to read something that is not a plain file,
is refused with a reason, by every file tool, and nothing from outside appears in any answer."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bridge.tools.results import ErrorCode, ToolFailure
from bridge.tools.workspace import Workspace
from bridge.tools.workspace_paths import Budget

from .conftest import OUTSIDE_SECRET

# Paths refused by their text alone, before anything is opened.
TEXT_CORPUS = [
    "..",
    "../outside/secret.txt",
    "notes/../../outside/secret.txt",
    "notes/..",
    "./notes/spawn.txt",
    "notes/./spawn.txt",
    "/etc/passwd",
    "//etc/passwd",
    "notes//spawn.txt",
    "notes/spawn.txt\x00.md",
    "\x00",
    "notes\\..\\..\\outside",
    "notes/spawn\u202e.txt",  # right-to-left override
    "notes/\u200bspawn.txt",  # zero-width space
    "notes/spawn.txt\u2028x",  # line separator
    "notes/spawn.txt\n",
    "notes/\x1b[2Jspawn.txt",
    "a" * 256,
    "notes/" + "é" * 128,  # 256 bytes in UTF-8
    "x/" * 600,
    "a/b/c/d/e",  # deeper than max_depth=4
]


def _calls(workspace: Workspace, path: str) -> list[Callable[[], Any]]:
    return [
        lambda: workspace.list_folder(path, budget=Budget.of(5)),
        lambda: workspace.read_file(path, budget=Budget.of(5)),
        lambda: workspace.grep("OUTSIDE", path, budget=Budget.of(5)),
    ]


@pytest.mark.parametrize("path", TEXT_CORPUS, ids=repr)
def test_text_corpus_is_refused_by_every_tool(workspace: Workspace, path: str) -> None:
    for call in _calls(workspace, path):
        with pytest.raises(ToolFailure) as caught:
            call()
        assert caught.value.code is ErrorCode.PATH_REFUSED, caught.value.message
        assert OUTSIDE_SECRET not in caught.value.message
        assert str(workspace.directory.parent) not in caught.value.message


def _link(workspace_dir: Path, outside: Path, name: str) -> str:
    """Plant one hostile entry and return the path that reaches it."""
    if name == "leaf_link_to_outside_file":
        (workspace_dir / "notes" / "leak.txt").symlink_to(outside / "secret.txt")
        return "notes/leak.txt"
    if name == "middle_link_to_outside_folder":
        (workspace_dir / "notes" / "via").symlink_to(outside)
        return "notes/via/secret.txt"
    if name == "symlinked_subfolder":
        (workspace_dir / "linked").symlink_to(outside / "nested")
        return "linked"
    if name == "relative_link_up":
        (workspace_dir / "up").symlink_to("..")
        return "up/outside/secret.txt"
    if name == "link_to_dev_null":
        (workspace_dir / "null").symlink_to("/dev/null")
        return "null"
    if name == "link_inside_workspace":
        # Even a link that stays inside is refused: the rule is "no links", not "no escapes".
        (workspace_dir / "alias.txt").symlink_to(workspace_dir / "notes" / "spawn.txt")
        return "alias.txt"
    if name == "fifo":
        os.mkfifo(workspace_dir / "pipe")
        return "pipe"
    if name == "hard_link_to_outside_file":
        os.link(outside / "secret.txt", workspace_dir / "hard.txt")
        return "hard.txt"
    raise AssertionError(name)


PLANTED = [
    "leaf_link_to_outside_file",
    "middle_link_to_outside_folder",
    "symlinked_subfolder",
    "relative_link_up",
    "link_to_dev_null",
    "link_inside_workspace",
    "fifo",
    "hard_link_to_outside_file",
]


@pytest.mark.parametrize("name", PLANTED)
def test_planted_entries_are_refused(
    workspace: Workspace, workspace_dir: Path, outside: Path, name: str
) -> None:
    path = _link(workspace_dir, outside, name)
    for call in _calls(workspace, path):
        with pytest.raises(ToolFailure) as caught:
            call()
        # A FIFO or a hard-linked file is a refused *file*; list/grep on a file say "not a
        # folder" or refuse it; what matters is that none of them reads it.
        assert caught.value.code in (ErrorCode.PATH_REFUSED, ErrorCode.NOT_A_DIRECTORY)
        assert OUTSIDE_SECRET not in caught.value.message


def test_special_unix_socket_is_refused(workspace: Workspace, workspace_dir: Path) -> None:
    import socket

    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(workspace_dir / "sock"))
        with pytest.raises(ToolFailure) as caught:
            workspace.read_file("sock", budget=Budget.of(5))
        assert caught.value.code is ErrorCode.PATH_REFUSED
        assert "socket" in caught.value.message
    finally:
        server.close()


def test_walks_never_enter_links_or_read_specials(
    workspace: Workspace, workspace_dir: Path, outside: Path
) -> None:
    for name in PLANTED:
        _link(workspace_dir, outside, name)
    listing = workspace.list_folder("", depth=4, budget=Budget.of(5))
    found = json.dumps(listing)
    assert OUTSIDE_SECRET not in found
    # Links are shown as links, and nothing below them is listed.
    kinds = {entry["path"]: entry["type"] for entry in listing["entries"]}
    assert kinds["linked"] == "link (not followed)"
    assert kinds["notes/via"] == "link (not followed)"
    assert not any(path.startswith(("linked/", "notes/via/", "up/")) for path in kinds)
    result = workspace.grep("OUTSIDE|spawn", "", budget=Budget.of(5))
    assert OUTSIDE_SECRET not in json.dumps(result)
    assert {m["path"] for m in result["matches"]} == {"notes/spawn.txt"}
    # The hard link and the FIFO were skipped as files; links are not even candidates.
    assert result["files_skipped"] >= 2


def test_workspace_folder_replaced_by_a_link_is_refused(tmp_path: Path, outside: Path) -> None:
    (tmp_path / "workspace").symlink_to(outside)
    workspace = Workspace(tmp_path / "workspace")
    with pytest.raises(ToolFailure) as caught:
        workspace.read_file("secret.txt", budget=Budget.of(5))
    assert caught.value.code is ErrorCode.PATH_REFUSED


def test_results_carry_only_relative_paths(workspace: Workspace, workspace_dir: Path) -> None:
    answers = [
        workspace.list_folder("", depth=4, budget=Budget.of(5)),
        workspace.read_file("notes/spawn.txt", budget=Budget.of(5)),
        workspace.grep("spawn|deep", "notes", budget=Budget.of(5)),
    ]
    for answer in answers:
        assert str(workspace_dir.parent) not in json.dumps(answer)


def test_workspace_config_yml_is_an_ordinary_file(workspace: Workspace) -> None:
    result = workspace.read_file("config.yml", budget=Budget.of(5))
    assert result["text"] == "schema: 1\nplain: workspace file\n"


def test_fullwidth_dots_are_a_plain_name_not_a_parent(workspace: Workspace) -> None:
    # U+FF0E looks like '.', but it is an ordinary name: looked up literally, not found.
    with pytest.raises(ToolFailure) as caught:
        workspace.read_file("\uff0e\uff0e/outside/secret.txt", budget=Budget.of(5))
    assert caught.value.code is ErrorCode.NOT_FOUND
