from __future__ import annotations

from pathlib import Path

import pytest

from bridge.tools.workspace import Workspace, WorkspaceLimits

OUTSIDE_SECRET = "OUTSIDE-CONTENT-must-never-appear"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the workspace whose content must never leak."""
    path = tmp_path / "outside"
    (path / "nested").mkdir(parents=True)
    (path / "secret.txt").write_text(OUTSIDE_SECRET + "\n")
    (path / "nested" / "secret.txt").write_text(OUTSIDE_SECRET + "\n")
    (tmp_path / ".env").write_text(f"KEY={OUTSIDE_SECRET}\n")
    return path


@pytest.fixture
def workspace_dir(tmp_path: Path, outside: Path) -> Path:
    path = tmp_path / "workspace"
    (path / "skills").mkdir(parents=True)
    (path / "notes" / "deep").mkdir(parents=True)
    (path / "AGENTS.md").write_text("You are the server's helper.\n")
    (path / "config.yml").write_text("schema: 1\nplain: workspace file\n")
    (path / "notes" / "spawn.txt").write_text("spawn is at 0 64 0\nnether hub at 10 70 -3\n")
    (path / "notes" / "deep" / "far.txt").write_text("deep note\n")
    return path


@pytest.fixture
def workspace(workspace_dir: Path) -> Workspace:
    return Workspace(workspace_dir, limits=WorkspaceLimits(max_depth=4))
