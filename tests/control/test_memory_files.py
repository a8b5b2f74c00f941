"""``workspace/memory/*.md``: list items and paragraphs become server memories; bad files are
problems naming the file and line, and the folder is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.control import ConfigLoadError, init_config_dir, load_control_plane
from bridge.control.memory_files import MemoryNote, load_memory_notes, notes_of

RULES = """# Server rules

- No griefing; build at least
  100 blocks from another base.
* PvP only in the arena.
1. The shop is run by Alex.

<!-- a note for the owner,
over two lines -->
The nether hub is at 0 80 0,
linked to every town.

## Places
"""


def test_items_and_paragraphs_are_notes_with_their_lines() -> None:
    assert notes_of(RULES, "workspace/memory/rules.md") == [
        MemoryNote(
            "workspace/memory/rules.md",
            3,
            "No griefing; build at least 100 blocks from another base.",
        ),
        MemoryNote("workspace/memory/rules.md", 5, "PvP only in the arena."),
        MemoryNote("workspace/memory/rules.md", 6, "The shop is run by Alex."),
        MemoryNote(
            "workspace/memory/rules.md", 10, "The nether hub is at 0 80 0, linked to every town."
        ),
    ]


def folder(tmp_path: Path, files: dict[str, bytes]) -> Path:
    config = tmp_path / "config"
    init_config_dir(config)
    memory = config / "workspace" / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (memory / name).write_bytes(data)
    return config


def test_the_plane_carries_the_notes(tmp_path: Path) -> None:
    config = folder(tmp_path, {"rules.md": RULES.encode(), "ignored.txt": b"- not markdown"})
    plane = load_control_plane(config, environ={})
    assert [note.text for note in plane.memory_notes][-1].startswith("The nether hub")
    assert len(plane.memory_notes) == 4


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            b"- ok\n- " + b"x" * 600 + b"\n",
            "workspace/memory/bad.md:2:1: a memory of 600 characters",
        ),
        (b"- \xff\xfe broken\n", "workspace/memory/bad.md"),
    ],
)
def test_a_bad_file_refuses_the_folder_naming_file_and_line(
    tmp_path: Path, data: bytes, expected: str
) -> None:
    config = folder(tmp_path, {"bad.md": data})
    with pytest.raises(ConfigLoadError) as raised:
        load_control_plane(config, environ={})
    assert expected in str(raised.value)


def test_a_linked_memory_folder_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "config"
    init_config_dir(config)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (config / "workspace" / "memory").symlink_to(elsewhere)
    notes, problems = load_memory_notes(config, 500)
    assert notes == ()
    assert "symbolic link" in str(problems[0])
