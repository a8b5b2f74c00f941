"""The agent's workspace: ``workspace/AGENTS.md`` and ``workspace/skills/*.md``.

``AGENTS.md`` opens the system prompt. A skill is a Markdown file that starts with a YAML front
matter block between ``---`` lines (``id``, ``name``, ``description``, ``triggers``), read with
the same strict YAML rules as the control-plane files.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import replace
from pathlib import Path

from pydantic import Field

from bridge.control.base import StrictModel
from bridge.control.files import read_regular_file
from bridge.control.problems import ConfigLoadError, Problem
from bridge.control.validation import validate_document
from bridge.control.yaml_strict import YamlDocument, load_strict_yaml
from bridge.unicode_text import plain_lines

WORKSPACE_DIR = "workspace"
AGENTS_FILE = "AGENTS.md"
SKILLS_DIR = "skills"
MAX_AGENTS_BYTES = 64 * 1024
MAX_SKILL_BYTES = 32 * 1024
MAX_SKILLS = 64

_FRONT_MATTER = re.compile(r"---[ \t]*\n(.*?\n)?---[ \t]*(?:\n|\Z)", re.DOTALL)


class SkillHeader(StrictModel):
    """The front matter of a skill file."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")
    name: str = Field(min_length=1, max_length=64)
    description: str = Field(min_length=1, max_length=512)
    triggers: list[str] = Field(default_factory=list, max_length=32)


class Skill(StrictModel):
    """A skill: its header and its Markdown body, with the file lines they start on (for
    problems found later in their text, such as a Function that does not exist)."""

    file: str
    header: SkillHeader
    body: str
    body_line: int = 1
    description_line: int | None = None


def load_workspace(config_dir: Path) -> tuple[str, tuple[Skill, ...], list[Problem]]:
    """``AGENTS.md`` text, the skills in file-name order, and every problem found."""
    problems: list[Problem] = []
    workspace = config_dir / WORKSPACE_DIR
    if not is_real_directory(workspace, WORKSPACE_DIR, problems, required=False):
        return "", (), problems
    agents_label = f"{WORKSPACE_DIR}/{AGENTS_FILE}"
    agents = ""
    try:
        data = read_regular_file(
            workspace / AGENTS_FILE, label=agents_label, max_bytes=MAX_AGENTS_BYTES
        )
        agents = "" if data is None else file_text(data, agents_label)
    except ConfigLoadError as exc:
        problems.extend(exc.problems)
    skills = _load_skills(workspace / SKILLS_DIR, problems)
    return agents, skills, problems


def _load_skills(directory: Path, problems: list[Problem]) -> tuple[Skill, ...]:
    label_dir = f"{WORKSPACE_DIR}/{SKILLS_DIR}"
    skills: list[Skill] = []
    seen: dict[str, str] = {}
    for label, text in markdown_files(directory, label_dir, problems, MAX_SKILLS, MAX_SKILL_BYTES):
        try:
            skill = parse_skill(text, label)
        except ConfigLoadError as exc:
            problems.extend(exc.problems)
            continue
        if skill.header.id in seen:
            message = f"skill id {skill.header.id!r} is also used by {seen[skill.header.id]}"
            problems.append(Problem(label, 2, None, "id", message))
            continue
        seen[skill.header.id] = label
        skills.append(skill)
    return tuple(skills)


def markdown_files(
    directory: Path, label_dir: str, problems: list[Problem], max_files: int, max_bytes: int
) -> list[tuple[str, str]]:
    """The ``*.md`` files of an optional workspace folder in file-name order, as (label, text);
    a folder that is not a real one, too many files, and a file that cannot be read (too big,
    not UTF-8, not a regular file) are problems, and such a file is left out."""
    if not is_real_directory(directory, label_dir, problems, required=False):
        return []
    names = sorted(entry.name for entry in os.scandir(directory) if entry.name.endswith(".md"))
    if len(names) > max_files:
        problems.append(Problem(label_dir, None, None, "", f"more than {max_files} files"))
        names = names[:max_files]
    files: list[tuple[str, str]] = []
    for name in names:
        label = f"{label_dir}/{name}"
        try:
            data = read_regular_file(directory / name, label=label, max_bytes=max_bytes)
            if data is not None:  # None: removed while listing
                files.append((label, file_text(data, label)))
        except ConfigLoadError as exc:
            problems.extend(exc.problems)
    return files


def parse_front_matter(text: str, label: str) -> tuple[YamlDocument, str, int]:
    """A workspace file's front matter (strict YAML), the text after it and the line that
    text starts on; ``ConfigLoadError`` naming the file and line when there is none or it is
    not valid."""
    text = plain_lines(text)
    match = _FRONT_MATTER.match(text)
    if match is None:
        message = "must start with a front matter block between --- lines"
        raise ConfigLoadError([Problem(label, 1, 1, "", message)])
    try:
        document = load_strict_yaml((match.group(1) or "").encode("utf-8"), label)
    except ConfigLoadError as exc:
        # The front matter starts on line 2 of the file.
        raise ConfigLoadError(
            replace(p, line=p.line + 1) if p.line is not None else p for p in exc.problems
        ) from None
    return document, text[match.end() :], text[: match.end()].count("\n") + 1


def parse_skill(text: str, label: str) -> Skill:
    """A skill from its file text, or ``ConfigLoadError``."""
    document, body, body_line = parse_front_matter(text, label)
    header, problems = validate_document(SkillHeader, document, label, line_offset=1)
    if header is None:
        raise ConfigLoadError(problems)
    description_line, _ = document.locate(("description",))
    return Skill(
        file=label,
        header=header,
        body=body,
        body_line=body_line,
        description_line=description_line + 1 if description_line is not None else None,
    )


def file_text(data: bytes, label: str) -> str:
    try:
        return plain_lines(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigLoadError([Problem(label, line, None, "", "not valid UTF-8")]) from None


def is_real_directory(path: Path, label: str, problems: list[Problem], *, required: bool) -> bool:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if required:
            problems.append(Problem(label, None, None, "", "folder is missing"))
        return False
    if stat.S_ISLNK(info.st_mode):
        problems.append(Problem(label, None, None, "", "is a symbolic link; refused"))
        return False
    if not stat.S_ISDIR(info.st_mode):
        problems.append(Problem(label, None, None, "", "is not a folder"))
        return False
    return True
