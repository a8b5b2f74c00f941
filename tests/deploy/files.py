"""Where the deployment files are, and small readers for them shared by the deploy tests."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
COMPOSE = DOCKER / "compose.yaml"
DOCKERFILE = DOCKER / "bridge.Dockerfile"
PAPER = ROOT / "plugin-java" / "paper"
PLUGIN_YML = PAPER / "src" / "main" / "resources" / "plugin.yml"
PLUGIN_LINK_YML = PAPER / "src" / "main" / "resources" / "plugin-link.yml"
PAPER_POM = PAPER / "pom.xml"
PARENT_POM = ROOT / "plugin-java" / "pom.xml"


def load_yaml(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path}: the top level is not a mapping"
    return data


@dataclass(frozen=True)
class Instruction:
    """One Dockerfile instruction: its keyword, its argument text and the line it starts on."""

    keyword: str
    argument: str
    line: int


def parse_dockerfile(text: str) -> list[Instruction]:
    """Instructions in order, with continuation lines joined and comments dropped.

    Enough of the Dockerfile grammar for structural checks: no heredocs, no parser directives
    beyond the leading ``# syntax`` comment (which is dropped like any comment).
    """
    instructions: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        if not pending:
            start = number
        continued = stripped.endswith("\\")
        pending.append(stripped[:-1].strip() if continued else stripped)
        if not continued:
            keyword, _, argument = " ".join(pending).partition(" ")
            if not re.fullmatch(r"[A-Za-z]+", keyword):
                raise ValueError(f"line {start}: '{keyword}' is not an instruction keyword")
            instructions.append(Instruction(keyword.upper(), argument.strip(), start))
            pending = []
    if pending:
        raise ValueError(f"line {start}: the last instruction ends with a line continuation")
    return instructions


def final_stage(instructions: list[Instruction]) -> list[Instruction]:
    """The instructions of the last build stage, from its FROM on."""
    starts = [index for index, item in enumerate(instructions) if item.keyword == "FROM"]
    assert starts, "the Dockerfile has no FROM"
    return instructions[starts[-1] :]
