"""Windows line ends and byte order marks in every file the bridge reads from an owner.

Editors on Windows save ``\\r\\n`` and often a UTF-8 byte order mark. Each file of a fresh
folder is rewritten that way (plus a ``.env`` and a skill) and must read exactly as the
``\\n`` original does: the same plane, the same skills, no ``\\r`` in any value.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.control import load_control_plane
from bridge.control.envfile import read_env_file
from bridge.tools.skills import discover_skills
from bridge.tools.workspace import Workspace

SKILL = """---
id: windows-skill
name: Windows skill
description: saved by a Windows editor
triggers: [window]
---
Body line one.
Body line two.
"""
ENV = "OPENAI_API_KEY=sk-windows-key-1234\n# a comment\nOTHER='quoted value'\n"


def _owner_files(folder: Path) -> list[Path]:
    return [
        path for path in sorted(folder.rglob("*")) if path.is_file() and "data" not in path.parts
    ]


def _windows(folder: Path, *, bom: bool) -> None:
    for path in _owner_files(folder):
        text = path.read_bytes().decode("utf-8").replace("\n", "\r\n")
        path.write_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8"))


def _prepared(config_dir: Path) -> Path:
    (config_dir / "workspace" / "skills" / "windows.md").write_text(SKILL)
    (config_dir / ".env").write_text(ENV)
    (config_dir / ".env").chmod(0o600)
    return config_dir


@pytest.mark.parametrize("bom", [False, True], ids=["crlf", "crlf-and-bom"])
def test_every_owner_file_reads_the_same_with_windows_line_ends(
    config_dir: Path, tmp_path: Path, bom: bool
) -> None:
    _prepared(config_dir)
    unix = load_control_plane(config_dir, environ={})
    unix_env = read_env_file(config_dir)
    _windows(config_dir, bom=bom)
    assert all(b"\r\n" in path.read_bytes() for path in _owner_files(config_dir))

    windows = load_control_plane(config_dir, environ={})

    assert [p for p in windows.warnings if "line" in p.message.lower()] == []
    assert windows.skills == unix.skills
    assert windows.agents_md == unix.agents_md
    assert windows.functions == unix.functions  # sources and their hashes alike
    assert windows.config == unix.config
    assert windows.messages == unix.messages
    assert (
        read_env_file(config_dir)
        == unix_env
        == {
            "OPENAI_API_KEY": "sk-windows-key-1234",
            "OTHER": "quoted value",
        }
    )
    assert all("\r" not in skill.body for skill in windows.skills)


def test_skills_found_through_the_file_tools_read_the_same(config_dir: Path) -> None:
    _prepared(config_dir)
    workspace = Workspace(config_dir / "workspace")
    unix = discover_skills(workspace)
    _windows(config_dir, bom=True)
    windows = discover_skills(workspace)
    assert windows.problems == unix.problems == ()
    assert [s.header for s in windows.skills] == [s.header for s in unix.skills]
    assert [s.body for s in windows.skills] == [s.body for s in unix.skills]


def test_the_model_reads_a_windows_file_without_carriage_returns(config_dir: Path) -> None:
    _prepared(config_dir)
    _windows(config_dir, bom=True)
    workspace = Workspace(config_dir / "workspace")
    read = workspace.read_file("skills/windows.md", budget=workspace.budget())
    assert read["text"] == SKILL
