"""A folder swapped for a link to the outside while a tool walks: refused or read from the
inside, never from the outside."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from bridge.tools import workspace_paths as paths
from bridge.tools.results import ErrorCode, ToolFailure
from bridge.tools.workspace import Workspace
from bridge.tools.workspace_paths import Budget

from .conftest import OUTSIDE_SECRET

INSIDE = "inside content\n"
ITERATIONS = 1500


@pytest.fixture
def swap_site(workspace_dir: Path, outside: Path) -> Path:
    """notes/swap is a real folder; notes/parked_link is a link to the outside, ready."""
    notes = workspace_dir / "notes"
    (notes / "swap").mkdir()
    (notes / "swap" / "secret.txt").write_text(INSIDE)
    (notes / "parked_link").symlink_to(outside)
    return notes


def _swap_to_link(notes: Path) -> None:
    os.rename(notes / "swap", notes / "parked_real")
    os.rename(notes / "parked_link", notes / "swap")


def _swap_to_real(notes: Path) -> None:
    os.rename(notes / "swap", notes / "parked_link")
    os.rename(notes / "parked_real", notes / "swap")


def test_link_swapped_in_just_before_its_step_is_refused(
    workspace: Workspace, swap_site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open_at = paths._open_at

    def racing_open_at(dir_fd: int, name: str, *args: Any, **kwargs: Any) -> int:
        if name == "swap":
            _swap_to_link(swap_site)  # the name was checked as text; now it is a link
        return real_open_at(dir_fd, name, *args, **kwargs)

    monkeypatch.setattr(paths, "_open_at", racing_open_at)
    with pytest.raises(ToolFailure) as caught:
        workspace.read_file("notes/swap/secret.txt", budget=Budget.of(5))
    assert caught.value.code is ErrorCode.PATH_REFUSED
    assert "symbolic link" in caught.value.message


def test_link_swapped_in_after_its_step_reads_the_folder_already_open(
    workspace: Workspace, swap_site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open_at = paths._open_at

    def racing_open_at(dir_fd: int, name: str, *args: Any, **kwargs: Any) -> int:
        if name == "secret.txt":
            _swap_to_link(swap_site)  # too late: the walk holds the real folder open
        return real_open_at(dir_fd, name, *args, **kwargs)

    monkeypatch.setattr(paths, "_open_at", racing_open_at)
    result = workspace.read_file("notes/swap/secret.txt", budget=Budget.of(5))
    assert result["text"] == INSIDE


def test_racing_thread_never_leaks_outside_content(workspace: Workspace, swap_site: Path) -> None:
    stop = threading.Event()
    swaps = 0

    def racer() -> None:
        nonlocal swaps
        while not stop.is_set() and swaps < 50 * ITERATIONS:
            _swap_to_link(swap_site)
            _swap_to_real(swap_site)
            swaps += 1

    thread = threading.Thread(target=racer, daemon=True)
    thread.start()
    outcomes: dict[str, int] = {}
    try:
        for index in range(ITERATIONS):
            try:
                if index % 3 == 0:
                    answer: Any = workspace.read_file("notes/swap/secret.txt", budget=Budget.of(5))
                    assert answer["text"] == INSIDE
                elif index % 3 == 1:
                    answer = workspace.list_folder("notes", depth=2, budget=Budget.of(5))
                else:
                    answer = workspace.grep("content|OUTSIDE", "notes", budget=Budget.of(5))
                assert OUTSIDE_SECRET not in json.dumps(answer)
                outcomes["ok"] = outcomes.get("ok", 0) + 1
            except ToolFailure as exc:
                assert exc.code in (ErrorCode.PATH_REFUSED, ErrorCode.NOT_FOUND), exc.message
                assert OUTSIDE_SECRET not in exc.message
                outcomes[exc.code.value] = outcomes.get(exc.code.value, 0) + 1
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not thread.is_alive()
    assert sum(outcomes.values()) == ITERATIONS
    assert swaps > 0
