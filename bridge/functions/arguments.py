"""Validation of the model's `arguments` for `call_function`.

Caps first (size, depth, members), so a hostile value is refused before the schema validator
walks it; then the Function's JSON Schema. At most `MAX_VIOLATIONS` problems are reported, each
with the path of the offending value, so the model can correct itself without a wall of text.
"""

from __future__ import annotations

import json
from typing import Any

from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionSpec
from bridge.errors import FunctionError
from bridge.functions.results import JSONLimitError, measure_json
from bridge.schemas import SafeSchema, TookTooLong
from bridge.schemas.safe_schema import BOUND_S

MAX_VIOLATIONS = 3


class InvalidArguments(FunctionError):
    """The arguments were refused; `violations` lists at most `MAX_VIOLATIONS` problems."""

    def __init__(self, violations: list[str]) -> None:
        super().__init__("; ".join(violations))
        self.violations = violations


async def validate_arguments(
    spec: FunctionSpec, arguments: Any, limits: FunctionLimits
) -> dict[str, Any]:
    """Return `arguments` if they fit the limits and the schema; else `InvalidArguments`."""
    if not isinstance(arguments, dict):
        raise InvalidArguments([f"arguments must be a JSON object, not {type(arguments).__name__}"])
    try:
        measure_json(arguments, depth=limits.argument_depth, members=limits.argument_members)
        text = json.dumps(arguments, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    except JSONLimitError as exc:
        raise InvalidArguments([f"arguments: {exc}"]) from exc
    except (TypeError, ValueError) as exc:
        raise InvalidArguments([f"arguments are not JSON: {exc}"]) from exc
    if len(text) > limits.argument_chars:
        raise InvalidArguments([f"arguments: {len(text)} characters, over {limits.argument_chars}"])
    try:
        found = await SafeSchema.of(spec.parameters).checked(
            arguments, size=len(text), limit=MAX_VIOLATIONS
        )
    except TookTooLong:
        raise InvalidArguments([f"arguments: checking them took over {BOUND_S:g} s"]) from None
    violations = [f"{error.where or '(root)'}: {error.message[:200]}" for error in found]
    if violations:
        raise InvalidArguments(violations)
    return arguments
