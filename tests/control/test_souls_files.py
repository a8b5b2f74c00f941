"""``workspace/souls/*.md`` and ``config.yml``'s ``persona``: a soul's front matter and text;
bad files, a repeated name and a persona naming a missing soul are problems naming the file,
line and field, and the folder is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.control import ConfigLoadError, load_control_plane
from bridge.control.souls_files import MAX_PERSONA_CHARS, load_souls

PIRATE = """---
name: pirate
description: A cheerful pirate who calls everyone matey.
---

You are a cheerful pirate. Call every player "matey".
"""


def souls_dir(config_dir: Path) -> Path:
    path = config_dir / "workspace" / "souls"
    path.mkdir(parents=True, exist_ok=True)
    return path


def set_persona(config_dir: Path, public: str | None, private: str | None = None) -> None:
    config = config_dir / "config.yml"
    text = config.read_text().replace("persona:\n  public: null\n  private: null\n", "")
    public_yaml = "null" if public is None else public
    private_yaml = "null" if private is None else private
    config.write_text(text + f"persona:\n  public: {public_yaml}\n  private: {private_yaml}\n")


def test_a_soul_is_read_with_its_persona_text_and_named_by_config(config_dir: Path) -> None:
    (souls_dir(config_dir) / "pirate.md").write_text(PIRATE)
    set_persona(config_dir, "pirate")
    plane = load_control_plane(config_dir, environ={})
    soul = plane.souls["pirate"]
    assert soul.description == "A cheerful pirate who calls everyone matey."
    assert soul.text == 'You are a cheerful pirate. Call every player "matey".'
    assert soul.file == "workspace/souls/pirate.md"
    assert plane.config.persona.public == "pirate" and plane.config.persona.private is None


def test_the_default_folder_has_no_soul_and_no_persona(config_dir: Path) -> None:
    plane = load_control_plane(config_dir, environ={})
    assert dict(plane.souls) == {}
    assert plane.config.persona.public is None and plane.config.persona.private is None


def test_a_persona_naming_a_missing_soul_refuses_the_folder_at_its_line(
    config_dir: Path,
) -> None:
    (souls_dir(config_dir) / "pirate.md").write_text(PIRATE)
    set_persona(config_dir, None, "knight")
    with pytest.raises(ConfigLoadError) as refused:
        load_control_plane(config_dir, environ={})
    (problem,) = [p for p in refused.value.problems if not p.warning]
    assert (problem.file, problem.path) == ("config.yml", "persona.private")
    lines = (config_dir / "config.yml").read_text().splitlines()
    assert problem.line is not None and "private: knight" in lines[problem.line - 1]
    assert "no soul named 'knight'" in problem.message and "pirate" in problem.message


@pytest.mark.parametrize(
    ("text", "line", "path", "message"),
    [
        ("You are a pirate.\n", 1, "", "front matter"),
        ("---\nname: Pirate King\ndescription: x\n---\ntext\n", 2, "name", "pattern"),
        ("---\nname: pirate\n---\ntext\n", None, "description", "required"),
        ("---\nname: pirate\ndescription: x\nmood: jolly\n---\ntext\n", 4, "mood", "unknown field"),
        ("---\nname: pirate\ndescription: x\n---\n\n   \n", 5, "", "no persona text"),
        (
            "---\nname: pirate\ndescription: x\n---\n" + "y" * (MAX_PERSONA_CHARS + 1),
            5,
            "",
            "at most",
        ),
    ],
)
def test_a_bad_soul_file_is_a_problem_naming_its_line_and_field(
    config_dir: Path, text: str, line: int | None, path: str, message: str
) -> None:
    (souls_dir(config_dir) / "bad.md").write_text(text)
    souls, problems = load_souls(config_dir)
    assert souls == {}
    (problem,) = problems
    assert problem.file == "workspace/souls/bad.md"
    if line is not None:
        assert problem.line == line, problem
    assert problem.path == path and message in problem.message, problem
    with pytest.raises(ConfigLoadError):
        load_control_plane(config_dir, environ={})


def test_a_repeated_name_is_a_problem_of_the_second_file(config_dir: Path) -> None:
    (souls_dir(config_dir) / "a.md").write_text(PIRATE)
    (souls_dir(config_dir) / "b.md").write_text(PIRATE)
    souls, problems = load_souls(config_dir)
    assert list(souls) == ["pirate"]
    (problem,) = problems
    assert problem.file == "workspace/souls/b.md" and "workspace/souls/a.md" in problem.message
