"""Skills discovered through the same file tools the model uses.

A skill is ``workspace/skills/<name>.md`` with front matter (``id``, ``name``, ``description``,
``triggers``) parsed strictly by the control plane's ``parse_skill``. Discovery goes through
``Workspace`` so a skill is subject to every rule a ``read`` is: a link, a FIFO or a hard link
in ``skills/`` is reported, never followed. A bad skill is reported with its location and left
out; the others stay usable.

The index the model sees and the ``read_skill`` tool are in ``bridge.tools.skill_index``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bridge.control.problems import ConfigLoadError, Problem
from bridge.control.workspace_files import Skill, parse_skill
from bridge.tools.results import ErrorCode, ToolFailure
from bridge.tools.workspace import Workspace

SKILLS_FOLDER = "skills"
MAX_SKILLS = 64
MAX_SKILL_CHARS = 32 * 1024


@dataclass(frozen=True, slots=True)
class SkillIndex:
    """The skills found, in file-name order, and every problem with the others."""

    skills: tuple[Skill, ...]
    problems: tuple[Problem, ...]


def discover_skills(workspace: Workspace) -> SkillIndex:
    """Every valid skill in ``workspace/skills``; a missing folder is simply no skills."""
    problems: list[Problem] = []
    try:
        listing = workspace.list_folder(SKILLS_FOLDER, depth=1, budget=workspace.budget())
    except ToolFailure as exc:
        if exc.code is ErrorCode.NOT_FOUND:
            return SkillIndex((), ())
        return SkillIndex((), (_problem(SKILLS_FOLDER, exc.message),))
    names = [
        entry["path"]
        for entry in listing["entries"]
        if entry["path"].endswith(".md") and entry["type"] != "folder"
    ]
    if len(names) > MAX_SKILLS or listing["truncated"]:
        problems.append(_problem(SKILLS_FOLDER, f"only the first {MAX_SKILLS} skills are used"))
    skills: list[Skill] = []
    seen: dict[str, str] = {}
    for path in names[:MAX_SKILLS]:
        skill = _load(workspace, path, problems)
        if skill is None:
            continue
        if skill.header.id in seen:
            message = f"skill id {skill.header.id!r} is also used by {seen[skill.header.id]}"
            problems.append(Problem(skill.file, None, None, "id", message))
            continue
        seen[skill.header.id] = skill.file
        skills.append(skill)
    return SkillIndex(tuple(skills), tuple(problems))


def _load(workspace: Workspace, path: str, problems: list[Problem]) -> Skill | None:
    label = f"workspace/{path}"
    try:
        result = workspace.read_file(path, budget=workspace.budget())
    except ToolFailure as exc:
        problems.append(_problem(path, exc.message))
        return None
    if result["size"] > MAX_SKILL_CHARS:
        problems.append(_problem(path, f"is larger than {MAX_SKILL_CHARS} bytes"))
        return None
    if result["truncated"]:
        problems.append(_problem(path, "is longer than workspace.max_read_chars"))
        return None
    try:
        return parse_skill(str(result["text"]), label)
    except ConfigLoadError as exc:
        problems.extend(exc.problems)
        return None


def skills_for_message(skills: Iterable[Skill], message: str) -> tuple[Skill, ...]:
    """The skills with a trigger that occurs in ``message`` (case-insensitive)."""
    folded = message.casefold()
    return tuple(
        skill
        for skill in skills
        if any(trigger.casefold() in folded for trigger in skill.header.triggers if trigger)
    )


def _problem(path: str, message: str) -> Problem:
    return Problem(f"workspace/{path}", None, None, "", message)
