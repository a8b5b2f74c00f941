"""`functions.yml`: the catalogue of Functions a server owner wrote and reviewed.

The models check everything that can be checked without running code: exact field sets, the
name pattern, capabilities, that `parameters` is a valid JSON Schema for an arguments object,
and unique names. `check_catalogue` adds the checks that need `FunctionLimits` (source size).
Every message names the function and the field, so an owner can find the line to fix.
"""

from __future__ import annotations

import hashlib
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from bridge.control.function_capabilities import Capability, parse_capability
from bridge.control.function_limits import FunctionLimits
from bridge.control.shipped_schemas import shipped_schema_texts
from bridge.errors import FunctionError
from bridge.schemas import SafeSchema, SchemaRefused

NAME_PATTERN = r"^[a-z][a-z0-9]*([._-][a-z0-9]+)*$"


class CatalogueError(FunctionError):
    """The Function catalogue breaks a rule that needs the limits to check."""


def _owner(info: ValidationInfo) -> str:
    name = info.data.get("name")
    return f"function {name!r}" if isinstance(name, str) else "function"


class FunctionSpec(BaseModel):
    """One entry of `functions:`; exactly these fields."""

    model_config = ConfigDict(extra="forbid", frozen=True, ignored_types=(cached_property,))

    name: str = Field(pattern=NAME_PATTERN, max_length=64)
    description: str = Field(min_length=1, max_length=1_024)
    enabled: bool
    capabilities: list[str]
    parameters: dict[str, Any]
    on_call: str = Field(min_length=1)
    # The owner's explicit opt-out: this Function's command.dispatch.* may reach never-listed
    # commands (validate warns every time). Unknown labels and unreadable carriers stay refused.
    allow_never: bool = False

    @field_validator("capabilities")
    @classmethod
    def _check_capabilities(cls, value: list[str], info: ValidationInfo) -> list[str]:
        seen: set[str] = set()
        for name in value:
            try:
                parse_capability(name)
            except ValueError as exc:
                raise ValueError(f"{_owner(info)}, capabilities: {exc}") from None
            if name in seen:
                raise ValueError(f"{_owner(info)}, capabilities: {name!r} is listed twice")
            seen.add(name)
        return value

    @field_validator("parameters")
    @classmethod
    def _check_parameters(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        try:
            SafeSchema.of(value, vouched=shipped_schema_texts())
        except SchemaRefused as exc:
            raise ValueError(f"{_owner(info)}, parameters: {exc}") from None
        if value.get("type") != "object":
            raise ValueError(f'{_owner(info)}, parameters: must have "type": "object"')
        return value

    @field_validator("on_call")
    @classmethod
    def _check_source(cls, value: str, info: ValidationInfo) -> str:
        # A cheap guard for the commonest mistake; the engine reports real syntax errors.
        if "onCall" not in value:
            raise ValueError(
                f"{_owner(info)}, on_call: must define async function onCall(ctx, api)"
            )
        return value

    @cached_property
    def source_sha256(self) -> str:
        """Hex SHA-256 of `on_call` as UTF-8; recorded with every invocation."""
        return hashlib.sha256(self.on_call.encode("utf-8")).hexdigest()

    @cached_property
    def parsed_capabilities(self) -> frozenset[Capability]:
        return frozenset(parse_capability(name) for name in self.capabilities)


class FunctionsFile(BaseModel):
    """The whole `functions.yml`."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    # `schema` would shadow a BaseModel attribute, hence the alias.
    schema_version: Literal[1] = Field(alias="schema")
    api_version: Literal[1]
    functions: list[FunctionSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_names(self) -> FunctionsFile:
        seen: set[str] = set()
        for spec in self.functions:
            if spec.name in seen:
                raise ValueError(f"function {spec.name!r}, name: defined more than once")
            seen.add(spec.name)
        return self

    def get(self, name: str) -> FunctionSpec | None:
        """The Function with exactly this name (case-sensitive), or None."""
        for spec in self.functions:
            if spec.name == name:
                return spec
        return None


def catalogue_problems(catalogue: FunctionsFile, limits: FunctionLimits) -> list[str]:
    """Rules that need the limits; each problem names the function and field."""
    problems: list[str] = []
    for spec in catalogue.functions:
        if len(spec.on_call) > limits.source_chars:
            problems.append(
                f"function {spec.name!r}, on_call: {len(spec.on_call)} characters, "
                f"over the limit of {limits.source_chars} (functions.source_chars)"
            )
    return problems


def check_catalogue(catalogue: FunctionsFile, limits: FunctionLimits) -> None:
    """Raise `CatalogueError` listing every limit the catalogue breaks."""
    problems = catalogue_problems(catalogue, limits)
    if problems:
        raise CatalogueError("; ".join(problems))
