"""Validating parsed YAML against a model and turning pydantic errors into located problems."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from bridge.control.problems import Problem, format_path
from bridge.control.yaml_strict import PathParts, YamlDocument

ModelT = TypeVar("ModelT", bound=BaseModel)

# pydantic's wording, reworded for someone editing a YAML file.
_MESSAGES = {
    "extra_forbidden": "unknown field",
    "missing": "required field is missing",
}


def validate_document(
    model: type[ModelT],
    document: YamlDocument,
    file: str,
    *,
    context: Mapping[str, Any] | None = None,
    line_offset: int = 0,
) -> tuple[ModelT | None, list[Problem]]:
    """The validated model, or ``None`` and every problem found (never an input value)."""
    if not isinstance(document.value, dict):
        kind = "empty" if document.value is None else "not a mapping"
        return None, [Problem(file, None, None, "", f"the file is {kind}; expected fields")]
    try:
        return model.model_validate(document.value, strict=True, context=context), []
    except ValidationError as exc:
        errors = exc.errors(include_input=False)
        return None, [_problem(error, document, file, line_offset) for error in errors]


def _problem(error: Any, document: YamlDocument, file: str, line_offset: int) -> Problem:
    path: PathParts = tuple(part for part in error["loc"] if isinstance(part, str | int))
    line, column = document.locate(path)
    if line is not None:
        line += line_offset
    message = _MESSAGES.get(error["type"], error["msg"])
    message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    return Problem(file, line, column, format_path(path), message)
