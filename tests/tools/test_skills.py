"""Skills found through the file tools: valid ones indexed, bad ones reported, none followed."""

from __future__ import annotations

import os
from pathlib import Path

from bridge.control.layout import DEFAULT_SKILL_FILES, default_bytes
from bridge.tools.skills import discover_skills, skills_for_message
from bridge.tools.workspace import Workspace

from .conftest import OUTSIDE_SECRET

GOOD = """\
---
id: warps
name: Warps
description: How to use the server's warp commands.
triggers: [warp, teleport]
---
Use /warp NAME.
"""


def _write(workspace_dir: Path, name: str, text: str) -> None:
    (workspace_dir / "skills" / name).write_text(text)


def test_valid_skills_are_indexed_in_file_order(workspace_dir: Path, workspace: Workspace) -> None:
    _write(workspace_dir, "b-warps.md", GOOD)
    _write(workspace_dir, "a-homes.md", GOOD.replace("warps", "homes").replace("Warps", "Homes"))
    _write(workspace_dir, "notes.txt", "not a skill")
    index = discover_skills(workspace)
    assert [skill.header.id for skill in index.skills] == ["homes", "warps"]
    assert index.skills[1].file == "workspace/skills/b-warps.md"
    assert index.skills[1].body == "Use /warp NAME.\n"
    assert index.problems == ()


def test_bad_skills_are_reported_with_their_location(
    workspace_dir: Path, workspace: Workspace, outside: Path
) -> None:
    _write(workspace_dir, "a-good.md", GOOD)
    _write(workspace_dir, "no-front-matter.md", "# Just text\n")
    _write(workspace_dir, "unknown-field.md", GOOD.replace("triggers:", "run: op\ntriggers:"))
    _write(workspace_dir, "bad-id.md", GOOD.replace("id: warps", "id: Warps!"))
    _write(workspace_dir, "z-duplicate.md", GOOD)
    (workspace_dir / "skills" / "linked.md").symlink_to(outside / "secret.txt")
    index = discover_skills(workspace)
    assert [skill.file for skill in index.skills] == ["workspace/skills/a-good.md"]
    by_file = {problem.file: problem for problem in index.problems}
    assert set(by_file) == {
        "workspace/skills/bad-id.md",
        "workspace/skills/z-duplicate.md",
        "workspace/skills/linked.md",
        "workspace/skills/no-front-matter.md",
        "workspace/skills/unknown-field.md",
    }
    assert (
        by_file["workspace/skills/unknown-field.md"].line,
        by_file["workspace/skills/unknown-field.md"].message,
    ) == (5, "unknown field")  # line 5 of the file: the `run:` key
    assert "symbolic link" in by_file["workspace/skills/linked.md"].message
    assert (
        "also used by workspace/skills/a-good.md"
        in by_file["workspace/skills/z-duplicate.md"].message
    )
    assert OUTSIDE_SECRET not in repr(index)


def test_a_missing_skills_folder_is_no_skills(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    index = discover_skills(Workspace(tmp_path / "ws"))
    assert (index.skills, index.problems) == ((), ())


def test_a_linked_skills_folder_is_refused(tmp_path: Path, outside: Path) -> None:
    (tmp_path / "ws").mkdir()
    os.symlink(outside, tmp_path / "ws" / "skills")
    index = discover_skills(Workspace(tmp_path / "ws"))
    assert index.skills == ()
    assert "symbolic link" in index.problems[0].message


def test_shipped_example_skills_parse(tmp_path: Path) -> None:
    (tmp_path / "ws" / "skills").mkdir(parents=True)
    for name in DEFAULT_SKILL_FILES:
        (tmp_path / "ws" / "skills" / Path(name).name).write_bytes(default_bytes(name))
    index = discover_skills(Workspace(tmp_path / "ws"))
    assert len(index.skills) == len(DEFAULT_SKILL_FILES) and index.problems == ()


def test_trigger_matching(workspace_dir: Path, workspace: Workspace) -> None:
    _write(workspace_dir, "warps.md", GOOD)
    skills = discover_skills(workspace).skills
    assert skills_for_message(skills, "can you TELEPORT me home") == skills
    assert skills_for_message(skills, "what is the weather") == ()
