"""The one verdict on a configuration folder: ``validate``, ``functions validate``, ``serve``
and every reload (``/mineclaw reload``, a network's adoption) ask this module, so no two of
them can call the same folder valid and invalid.

``load_control_plane`` reads and validates the files. What it cannot see on its own is checked
here, on the loaded plane, and each is an error for all four:

- a ``tools.yml`` entry the loader set aside (the loader keeps going without it; a folder with
  one is still refused, so the owner hears of it before a player asks for the tool);
- a Function source that does not compile (a warning for a disabled Function);
- a Function capability naming a native tool that is not configured;
- a skill naming a Function that does not exist;
- a ``listen.decision_model`` that ``providers.yml`` does not define (a typo would otherwise
  leave every listen-mode line to the classifier without a word), or a
  ``conversations.title_model`` it does not define.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bridge.control import ConfigLoadError, ControlPlane, Problem, load_control_plane
from bridge.control.layout import CONFIG_FILE, FUNCTIONS_FILE, TOOLS_FILE
from bridge.control.problems import format_path
from bridge.functions.review import review_catalogue, skill_texts, unknown_tool_problems
from bridge.functions.syntax_problems import function_syntax_problems


@dataclass(frozen=True, slots=True)
class FolderVerdict:
    """The plane (``None`` when the files themselves failed) and every problem found."""

    plane: ControlPlane | None
    problems: tuple[Problem, ...]

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(problem for problem in self.problems if not problem.warning)

    @property
    def valid(self) -> bool:
        return self.plane is not None and not self.errors


def folder_verdict(directory: Path, *, environ: Mapping[str, str] | None = None) -> FolderVerdict:
    """Load ``directory`` and judge it as ``serve`` would."""
    try:
        plane = load_control_plane(directory, environ=environ)
    except ConfigLoadError as exc:
        # The sources are still compiled: an owner fixes every problem in one pass.
        return FolderVerdict(None, (*exc.problems, *function_syntax_problems(directory)))
    return FolderVerdict(plane, tuple(plane_problems(plane)))


def plane_problems(plane: ControlPlane) -> list[Problem]:
    """The plane's warnings and what it cannot serve (see the module's list)."""
    problems = [_set_aside_is_an_error(problem) for problem in plane.warnings]
    problems += function_syntax_problems(plane.directory)
    known_tools = frozenset(name for name, spec in plane.tools.tools.items() if spec.enabled)
    for index, spec in enumerate(plane.functions.functions):
        for message in unknown_tool_problems(spec.capabilities, known_tools):
            path = format_path(("functions", index, "capabilities"))
            problems.append(Problem(FUNCTIONS_FILE, None, None, path, f"{spec.name}: {message}"))
    review = review_catalogue(
        plane.functions, plane.config.functions, skills=skill_texts(plane.skills)
    )
    problems += [missing.problem() for missing in review.missing_references]
    decision_model = plane.config.listen.decision_model
    if decision_model is not None and decision_model not in plane.providers.models:
        message = f"model {decision_model!r} is not configured in providers.yml"
        problems.append(Problem(CONFIG_FILE, None, None, "listen.decision_model", message))
    title_model = plane.config.conversations.title_model
    if title_model is not None and title_model not in plane.providers.models:
        message = f"model {title_model!r} is not configured in providers.yml"
        problems.append(Problem(CONFIG_FILE, None, None, "conversations.title_model", message))
    embedding_provider = plane.config.memory.embedding_provider
    if embedding_provider is not None and embedding_provider not in plane.providers.providers:
        message = f"provider {embedding_provider!r} is not configured in providers.yml"
        problems.append(Problem(CONFIG_FILE, None, None, "memory.embeddings", message))
    return problems


def refuse_unservable(plane: ControlPlane) -> None:
    """``ConfigLoadError`` with every error of ``plane_problems``; nothing when there is none.
    Blocking (the Function syntax check may start a child process)."""
    errors = [problem for problem in plane_problems(plane) if not problem.warning]
    if errors:
        raise ConfigLoadError(errors)


def _set_aside_is_an_error(problem: Problem) -> Problem:
    if problem.warning and problem.file == TOOLS_FILE and problem.path.startswith("tools."):
        return dataclasses.replace(problem, warning=False)
    return problem
