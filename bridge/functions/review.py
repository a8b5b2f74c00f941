"""What a server owner sees before trusting a catalogue: each Function's status and hash,
capabilities naming tools that do not exist, and skills that name Functions that do not exist.

Nothing here executes owner code. `functions validate` (CLI) and `/mineclaw functions validate`
(in game, through the command handler) both render a `CatalogueReview`.

Skills name a Function as `function:NAME` in their text, or in a `call_function` example as
`"name": "NAME"` on the same line. A reference to a Function that does not exist is reported
with the skill's file, the line and the field (`description` or `body`) it is on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from bridge.control.function_capabilities import parse_capability
from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionsFile, catalogue_problems
from bridge.control.problems import Problem
from bridge.control.workspace_files import Skill

_FUNCTION_REF = re.compile(r"\bfunction:([a-z][a-z0-9]*(?:[._-][a-z0-9]+)*)")
_CALL_REF = re.compile(r"call_function\b.*?\"name\"\s*:\s*\"([^\"]{1,64})\"")


@dataclass(frozen=True)
class FunctionRow:
    name: str
    enabled: bool
    source_sha256: str
    source_chars: int
    capabilities: tuple[str, ...]
    problems: tuple[str, ...]

    @property
    def status(self) -> str:
        if self.problems:
            return "problem"
        return "enabled" if self.enabled else "disabled"


@dataclass(frozen=True)
class SkillText:
    """One field of a skill to search for Function names: its file, the field, the file line
    the text starts on, and the text."""

    file: str
    field: str
    line: int | None
    text: str


def skill_texts(skills: Iterable[Skill]) -> list[SkillText]:
    """The fields of each skill that can name a Function: the description the model sees in
    the index, and the body it reads."""
    texts: list[SkillText] = []
    for skill in skills:
        texts.append(
            SkillText(skill.file, "description", skill.description_line, skill.header.description)
        )
        texts.append(SkillText(skill.file, "body", skill.body_line, skill.body))
    return texts


@dataclass(frozen=True)
class MissingReference:
    """A skill naming a Function that does not exist, where it does so."""

    file: str
    line: int | None
    field: str
    name: str

    def problem(self) -> Problem:
        message = f"names unknown Function {self.name!r}"
        return Problem(self.file, self.line, None, self.field, message)


@dataclass(frozen=True)
class CatalogueReview:
    rows: tuple[FunctionRow, ...]
    missing_references: tuple[MissingReference, ...]
    """Every place a skill names a Function that does not exist."""
    notes: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.missing_references and not any(row.problems for row in self.rows)


def function_references(text: str) -> list[str]:
    """Function names a skill's text refers to, in order of first mention."""
    return [name for name, _ in _located_references(text)]


def _located_references(text: str) -> list[tuple[str, int]]:
    """(name, 0-based line within ``text``) of each Function named, first mention only."""
    found: dict[str, int] = {}
    for pattern in (_FUNCTION_REF, _CALL_REF):
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start(1))
            if match.group(1) not in found or line < found[match.group(1)]:
                found[match.group(1)] = line
    return sorted(found.items(), key=lambda item: item[1])


def unknown_tool_problems(capabilities: Iterable[str], known_tools: frozenset[str]) -> list[str]:
    """One line per capability naming a native tool that is not configured (or not enabled)."""
    problems = []
    for capability in capabilities:
        tool = parse_capability(capability).tool
        if tool is not None and tool not in known_tools:
            problems.append(f"{capability}: no native tool {tool!r} is configured")
    return problems


def review_catalogue(
    catalogue: FunctionsFile,
    limits: FunctionLimits,
    *,
    skills: Iterable[SkillText] = (),
    known_tools: frozenset[str] | None = None,
) -> CatalogueReview:
    """Review without running anything. `skills`: the skill fields to search (`skill_texts`);
    `known_tools` the native tool names that exist (`None`: not known, so not checked)."""
    limit_problems = catalogue_problems(catalogue, limits)
    rows = []
    for spec in catalogue.functions:
        problems = [p for p in limit_problems if p.startswith(f"function {spec.name!r}")]
        if known_tools is not None:
            problems += unknown_tool_problems(spec.capabilities, known_tools)
        rows.append(
            FunctionRow(
                name=spec.name,
                enabled=spec.enabled,
                source_sha256=spec.source_sha256,
                source_chars=len(spec.on_call),
                capabilities=tuple(spec.capabilities),
                problems=tuple(problems),
            )
        )
    missing = tuple(
        MissingReference(
            skill.file, skill.line + offset if skill.line is not None else None, skill.field, name
        )
        for skill in skills
        for name, offset in _located_references(skill.text)
        if catalogue.get(name) is None
    )
    return CatalogueReview(tuple(rows), missing)


def review_lines(review: CatalogueReview) -> list[str]:
    """Plain lines for chat or a log: one per Function, then one per missing reference."""
    lines = [
        f"{row.name} [{row.status}] sha256 {row.source_sha256[:16]}... "
        f"{len(row.capabilities)} capabilities" + "".join(f"; {p}" for p in row.problems)
        for row in review.rows
    ]
    lines += [str(missing.problem()) for missing in review.missing_references]
    lines += list(review.notes)
    lines.append("catalogue ok" if review.ok else "catalogue has problems")
    return lines
