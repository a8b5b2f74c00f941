"""Skills reach the model: an index of them in the instructions, their text through a tool.

The index lists every skill of the control-plane version (id, name, description, triggers) after
``AGENTS.md`` in the instructions. It is a pure function of the skills, the tool that reads them
and the redactor, in file-name order, so the same version and permission set always give the
same bytes and the request prefix stays cacheable. Each field is put on one line (line breaks
and control characters become spaces), redacted, and cut; the whole index is bounded and says
how many skills it left out.

The model reads a skill's full text with ``read_skill`` (the built-in handler of that name,
whatever ``tools.yml`` calls it). Without it, an index is still given when the ``read`` file
tool is offered, naming each skill's file; with neither, the model cannot read a skill and no
index is given. Skills are the owner's text and grant no permission.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bridge.control.workspace_files import SKILLS_DIR, Skill
from bridge.redaction import Redactor
from bridge.tools.registry import CallContext, HandlerFn, TurnTools
from bridge.tools.results import ErrorCode, ToolFailure

READ_SKILL = "read_skill"
"""The built-in handler that returns a skill's text."""
MAX_INDEX_CHARS = 4096
"""The whole index, heading included; skills past it are counted, not listed."""
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 240
MAX_TRIGGERS = 8
MAX_TRIGGER_CHARS = 32

_NOT_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\s]+")


class ReadSkillArguments(BaseModel):
    """The handler's own minimum, whatever schema ``tools.yml`` gives the model."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    id: str = Field(min_length=1, max_length=64)


def skill_reader(skills: Sequence[Skill]) -> HandlerFn:
    """The ``read_skill`` handler over one version's skills (fixed when it was loaded)."""
    by_id = {skill.header.id: skill for skill in skills}

    async def read_skill(arguments: dict[str, Any], context: CallContext) -> Any:
        try:
            parsed = ReadSkillArguments.model_validate(arguments)
        except ValidationError as exc:
            raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, _first_error(exc)) from None
        skill = by_id.get(parsed.id)
        if skill is None:
            known = ", ".join(sorted(by_id)) or "none"
            raise ToolFailure(
                ErrorCode.NOT_FOUND, f"no skill has the id {parsed.id!r}; the ids are: {known}"
            )
        return {"id": skill.header.id, "name": skill.header.name, "text": skill.body.strip()}

    return read_skill


def instructions_with_skills(
    agents_md: str,
    skills: Sequence[Skill],
    tools: TurnTools | None,
    redactor: Redactor,
    *,
    max_chars: int = MAX_INDEX_CHARS,
) -> str | None:
    """``AGENTS.md`` followed by the skill index the turn's ``tools`` can use (None: no
    tools, no index); None when both are empty."""
    parts = [agents_md.strip()]
    if tools is not None and skills:
        parts.append(skills_index(skills, tools, redactor, max_chars=max_chars))
    text = "\n\n".join(part for part in parts if part)
    return text or None


def skills_index(
    skills: Sequence[Skill], tools: TurnTools, redactor: Redactor, *, max_chars: int
) -> str:
    """The index for a turn with ``tools``; empty when no offered tool can read a skill."""
    reader = _tool_with_handler(tools, READ_SKILL)
    file_reader = None if reader is not None else _tool_with_handler(tools, "read")
    if reader is not None:
        heading = (
            "Skills: guides the server owner wrote for you. When one fits the request, read "
            f"its full text with the {reader} tool (give its id) before acting."
        )
    elif file_reader is not None:
        heading = (
            "Skills: guides the server owner wrote for you. When one fits the request, read "
            f"its file with the {file_reader} tool before acting."
        )
    else:
        return ""
    lines = [heading]
    used = len(heading)
    for listed, skill in enumerate(skills):
        line = redactor.redact_text(_entry(skill, with_file=file_reader is not None))
        rest = len(skills) - listed
        # Room is kept for the line that would count the skills after this one.
        reserve = 0 if rest == 1 else 1 + len(_left_out(rest - 1))
        if used + 1 + len(line) + reserve > max_chars:
            lines.append(_left_out(rest))
            break
        lines.append(line)
        used += 1 + len(line)
    return "\n".join(lines)


def _entry(skill: Skill, *, with_file: bool) -> str:
    header = skill.header
    entry = f"- {header.id}: {_one_line(header.name, MAX_NAME_CHARS)}."
    entry += f" {_one_line(header.description, MAX_DESCRIPTION_CHARS)}"
    triggers = [_one_line(t, MAX_TRIGGER_CHARS) for t in header.triggers[:MAX_TRIGGERS]]
    triggers = [t for t in triggers if t]
    if triggers:
        entry += f" (when the player mentions: {', '.join(triggers)})"
    if with_file:
        entry += f" [file {SKILLS_DIR}/{skill.file.rsplit('/', 1)[-1]}]"
    return entry


def _left_out(count: int) -> str:
    return f"- ({count} more skill{'s' if count != 1 else ''} not listed: the index is full)"


def _one_line(text: str, limit: int) -> str:
    flat = _NOT_ONE_LINE.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _tool_with_handler(tools: TurnTools, handler: str) -> str | None:
    return next((name for name, tool in tools.tools.items() if tool.entry.handler == handler), None)


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "(arguments)"
    return f"{where}: {error['msg']}"
