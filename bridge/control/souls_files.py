"""``workspace/souls/*.md``: the personas ("souls") the assistant can speak as.

A soul is a Markdown file that starts with a YAML front matter block between ``---`` lines
(``name``, ``description``), read with the same strict rules as a skill; the rest of the file
is the persona text the bridge puts in the instructions. A persona is text only: it never
changes the tools, gates or budgets of a turn. ``config.yml``'s ``persona`` names the default
soul of each lane type; a name no file defines is a problem of that field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from bridge.control.base import StrictModel
from bridge.control.problems import ConfigLoadError, Problem
from bridge.control.validation import validate_document
from bridge.control.workspace_files import WORKSPACE_DIR, markdown_files, parse_front_matter

SOULS_DIR = "souls"
MAX_SOULS = 32
MAX_SOUL_BYTES = 16 * 1024
MAX_PERSONA_CHARS = 4000
"""The persona text of one soul: about 1,000 tokens, sent with every request of its lanes."""
SOUL_NAME = r"^[a-z0-9][a-z0-9_-]{0,31}$"


class SoulHeader(StrictModel):
    """The front matter of a soul file."""

    name: str = Field(pattern=SOUL_NAME)
    description: str = Field(min_length=1, max_length=256)


@dataclass(frozen=True, slots=True)
class Soul:
    file: str
    name: str
    description: str
    text: str
    """The persona text: the file after its front matter, trimmed."""


def load_souls(config_dir: Path) -> tuple[dict[str, Soul], list[Problem]]:
    """Every soul of ``workspace/souls/*.md`` by name, and every problem found."""
    problems: list[Problem] = []
    directory = config_dir / WORKSPACE_DIR / SOULS_DIR
    label_dir = f"{WORKSPACE_DIR}/{SOULS_DIR}"
    souls: dict[str, Soul] = {}
    for label, text in markdown_files(directory, label_dir, problems, MAX_SOULS, MAX_SOUL_BYTES):
        try:
            soul = parse_soul(text, label)
        except ConfigLoadError as exc:
            problems.extend(exc.problems)
            continue
        if soul.name in souls:
            message = f"soul name {soul.name!r} is also used by {souls[soul.name].file}"
            problems.append(Problem(label, 2, None, "name", message))
            continue
        souls[soul.name] = soul
    return souls, problems


def parse_soul(text: str, label: str) -> Soul:
    """A soul from its file text, or ``ConfigLoadError`` naming the file, line and field."""
    document, body, body_line = parse_front_matter(text, label)
    header, problems = validate_document(SoulHeader, document, label, line_offset=1)
    if header is None:
        raise ConfigLoadError(problems)
    persona = body.strip()
    if not persona:
        message = "has no persona text after its front matter"
        raise ConfigLoadError([Problem(label, body_line, 1, "", message)])
    if len(persona) > MAX_PERSONA_CHARS:
        message = f"a persona of {len(persona)} characters; at most {MAX_PERSONA_CHARS}"
        raise ConfigLoadError([Problem(label, body_line, 1, "", message)])
    return Soul(label, header.name, header.description, persona)
