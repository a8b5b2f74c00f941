"""Validating parsed YAML against a model and turning pydantic errors into located problems.

Messages are reworded for someone editing a YAML file: what was expected, the value found (never
for a field that may hold a secret), and for an unknown key the nearest known key.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from bridge.control.problems import Problem, format_path
from bridge.control.yaml_strict import PathParts, YamlDocument

ModelT = TypeVar("ModelT", bound=BaseModel)

# Fields whose values may be credentials: their values are never quoted back.
SECRET_FIELDS: frozenset[str] = frozenset({"api_key", "extra_headers", "extra_body", "token"})
MAX_SHOWN_CHARS = 60

_EXPECTED = {
    "int_type": "expected a whole number",
    "int_parsing": "expected a whole number",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "string_type": "expected text",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "dict_type": "expected a mapping (key: value lines)",
    "model_type": "expected a mapping (key: value lines)",
    "model_attributes_type": "expected a mapping (key: value lines)",
    "list_type": "expected a list",
    "missing": "required field is missing",
    "extra_forbidden": "unknown field",
}
_BOUNDS = {
    "greater_than_equal": ("ge", "must be at least {}"),
    "greater_than": ("gt", "must be more than {}"),
    "less_than_equal": ("le", "must be at most {}"),
    "less_than": ("lt", "must be less than {}"),
    "string_too_short": ("min_length", "must be at least {} character(s) long"),
    "string_too_long": ("max_length", "must be at most {} characters long"),
    "too_short": ("min_length", "must have at least {} item(s)"),
    "too_long": ("max_length", "must have at most {} items"),
}


def validate_document(
    model: type[ModelT],
    document: YamlDocument,
    file: str,
    *,
    context: Mapping[str, Any] | None = None,
    line_offset: int = 0,
) -> tuple[ModelT | None, list[Problem]]:
    """The validated model, or ``None`` and every problem found."""
    if not isinstance(document.value, dict):
        kind = "empty" if document.value is None else "not a mapping"
        return None, [Problem(file, None, None, "", f"the file is {kind}; expected fields")]
    try:
        return model.model_validate(document.value, strict=True, context=context), []
    except ValidationError as exc:
        errors = exc.errors(include_input=True)
        return None, [_problem(model, error, document, file, line_offset) for error in errors]


def _problem(
    model: type[BaseModel], error: Any, document: YamlDocument, file: str, line_offset: int
) -> Problem:
    path: PathParts = tuple(part for part in error["loc"] if isinstance(part, str | int))
    line, column = document.locate(path)
    if line is not None:
        line += line_offset
    return Problem(file, line, column, format_path(path), plain_message(model, error, path))


def plain_message(model: type[BaseModel], error: Any, path: Sequence[str | int]) -> str:
    """One pydantic error in an owner's words (``path`` is where it is in the file)."""
    kind = error["type"]
    context = error.get("ctx") or {}
    if kind == "extra_forbidden":
        return "unknown field" + _did_you_mean(model, path)
    if kind in _EXPECTED:
        message = _EXPECTED[kind]
    elif kind in _BOUNDS:
        key, template = _BOUNDS[kind]
        message = template.format(context.get(key, "?"))
    elif kind in ("literal_error", "enum"):
        expected = str(context.get("expected", "?"))
        several = " or " in expected or "," in expected
        message = f"expected {'one of ' if several else ''}{expected}"
    else:  # a validator's own words, which already say what is wrong with the value
        return str(error["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if kind != "missing" and "input" in error and not _secret(path):
        shown = _shown(error["input"])
        if shown is not None:
            message += f", got {shown}"
    return message


def _secret(path: Sequence[str | int]) -> bool:
    return any(part in SECRET_FIELDS for part in path)


def _shown(value: Any) -> str | None:
    """A scalar as the owner wrote it in YAML; ``None`` for mappings and lists."""
    if value is None:
        return "null (an empty value)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        text = value if len(value) <= MAX_SHOWN_CHARS else value[:MAX_SHOWN_CHARS] + "..."
        return repr(text) + (" (text)" if value.strip().lstrip("-").isdigit() else "")
    return None


def _did_you_mean(model: type[BaseModel], path: Sequence[str | int]) -> str:
    if not path or not isinstance(path[-1], str):
        return ""
    known = known_keys(model, path[:-1])
    close = difflib.get_close_matches(path[-1], known, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def known_keys(model: type[BaseModel], path: Sequence[str | int]) -> list[str]:
    """The field names (as written in YAML) of the model found at ``path`` below ``model``."""
    current: Any = model
    for part in path:
        current = _child(current, part)
        if current is None:
            return []
    if not _is_model(current):
        return []
    return [info.alias or name for name, info in current.model_fields.items()]


def _child(annotation: Any, part: str | int) -> Any:
    for candidate in _unwrap(annotation):
        if _is_model(candidate) and isinstance(part, str):
            for name, info in candidate.model_fields.items():
                if part in (name, info.alias):
                    return info.annotation
        origin = typing.get_origin(candidate)
        args = typing.get_args(candidate)
        if origin in (dict, Mapping) and len(args) == 2 and isinstance(part, str):
            return args[1]
        if origin in (list, tuple, Sequence) and args and isinstance(part, int):
            return args[0]
    return None


def _unwrap(annotation: Any) -> list[Any]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    return [annotation]


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)
