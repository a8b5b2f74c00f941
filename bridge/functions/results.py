"""JSON size limits, the shape a Function must return, and the runtime's stable error codes.

Values crossing the sandbox boundary are measured here, in Python, whatever the JavaScript
side claimed: characters first (before parsing), then depth and members in one iterative walk
(a deeply nested value cannot exhaust the Python stack).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bridge.errors import FunctionError


class ErrorCode:
    """Stable `error_code` values of a failed call (`output.error_code`)."""

    UNKNOWN_FUNCTION = "unknown_function"
    """No enabled Function has exactly this name."""
    FUNCTION_DISABLED = "function_disabled"
    """The Function exists but `enabled` is false."""
    FUNCTION_UNREVIEWED = "function_unreviewed"
    """`functions.require_review` is on and this source hash has no review record."""
    FUNCTION_SUSPENDED = "function_suspended"
    """Its calls kept killing their worker: suspended for `suspend_minutes`."""
    INVALID_ARGUMENTS = "invalid_arguments"
    """The arguments break the Function's schema or the argument limits."""
    SCRIPT_ERROR = "script_error"
    """The source did not parse, or onCall threw (stack overflow included)."""
    SYNC_TIME_LIMIT = "sync_time_limit"
    """One synchronous segment ran past `sync_segment_ms` (endless loop, microtask storm)."""
    WORKFLOW_TIME_LIMIT = "workflow_time_limit"
    """The whole call ran past `workflow_ms`."""
    MEMORY_LIMIT = "memory_limit"
    """The isolate's heap reached `heap_mb`, or its worker process `worker_memory_mb`."""
    ENGINE_CRASHED = "engine_crashed"
    """The worker process running the call died (a V8 fatal error, a signal); it was replaced."""
    RESULT_TOO_LARGE = "result_too_large"
    """The returned JSON is over `result_chars`, `result_depth` or `result_members`."""
    INVALID_RESULT = "invalid_result"
    """onCall did not return `{status, output}` as JSON."""
    WORKFLOW_STALLED = "workflow_stalled"
    """onCall awaits something nothing can settle (no timers exist, no operation is pending)."""
    CANCELLED = "cancelled"
    """The turn or the workflow was cancelled."""
    ENGINE_UNAVAILABLE = "engine_unavailable"
    """The sandbox could not be created."""
    WORKERS_BUSY = "workers_busy"
    """No worker became free within `worker_wait_ms`: the pool ran `max_workers` calls, or
    the player already ran their share of them."""
    PROTOCOL_ERROR = "protocol_error"
    """The sandbox answered the runtime with something malformed (tampered driver)."""
    INTERNAL_ERROR = "internal_error"
    """The runtime itself failed; the traceback is in the bridge log only."""


RUNTIME_CODES: frozenset[str] = frozenset(
    {
        ErrorCode.SYNC_TIME_LIMIT,
        ErrorCode.WORKFLOW_TIME_LIMIT,
        ErrorCode.MEMORY_LIMIT,
        ErrorCode.ENGINE_CRASHED,
        ErrorCode.WORKFLOW_STALLED,
        ErrorCode.CANCELLED,
        ErrorCode.ENGINE_UNAVAILABLE,
        ErrorCode.WORKERS_BUSY,
        ErrorCode.FUNCTION_SUSPENDED,
        ErrorCode.PROTOCOL_ERROR,
        ErrorCode.INTERNAL_ERROR,
    }
)
"""Codes only the runtime sets on a failed call: neither an error a Function returns nor
anything reported from inside the sandbox can carry one (limits, cancellation and crashes
cannot be forged)."""


class OperationCode:
    """Stable `code` of an error `api.invoke` rejects with (`err.code` in JavaScript)."""

    CAPABILITY_MISSING = "capability_missing"
    INVALID_INPUT = "invalid_input"
    OPERATION_LIMIT = "operation_limit"
    CONCURRENCY_LIMIT = "concurrency_limit"
    APPROVAL_LIMIT = "approval_limit"
    UNKNOWN_TOOL = "unknown_tool"
    HOST_ERROR = "host_error"
    CANCELLED = "cancelled"


class JSONLimitError(FunctionError):
    """A value is over a size, depth or member limit, or is not JSON."""


def measure_json(value: Any, *, depth: int, members: int) -> None:
    """Raise `JSONLimitError` if `value` nests deeper than `depth` or has more `members`."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    count = 0
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            if level > depth:
                raise JSONLimitError(f"nested deeper than {depth}")
            children = item.values() if isinstance(item, dict) else item
            count += len(item)
            if count > members:
                raise JSONLimitError(f"more than {members} members")
            stack.extend((child, level + 1) for child in children)


def parse_limited(text: str, *, chars: int, depth: int, members: int) -> Any:
    """Parse JSON `text` within the limits; `JSONLimitError` names the limit broken."""
    if len(text) > chars:
        raise JSONLimitError(f"{len(text)} characters, over {chars}")
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise JSONLimitError(f"nested deeper than {depth}") from exc
    except ValueError as exc:
        raise JSONLimitError(f"not JSON: {exc}") from exc
    measure_json(value, depth=depth, members=members)
    return value


def dump_limited(value: Any, *, chars: int, depth: int, members: int) -> str:
    """Serialise `value` as compact JSON within the limits."""
    measure_json(value, depth=depth, members=members)
    try:
        text = json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise JSONLimitError(f"not JSON: {exc}") from exc
    if len(text) > chars:
        raise JSONLimitError(f"{len(text)} characters, over {chars}")
    return text


class FunctionReturn(BaseModel):
    """What onCall must resolve to."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: str = Field(pattern=r"^[a-z][a-z_]{0,31}$")
    output: dict[str, Any]


def parse_return(value: Any) -> FunctionReturn:
    """Check the shape of onCall's value; `JSONLimitError` says what is wrong."""
    try:
        returned = FunctionReturn.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or '(value)'}: {error['msg']}"
            for error in exc.errors()[:3]
        )
        raise JSONLimitError(f"onCall must return {{status, output}}: {problems}") from exc
    code = returned.output.get("error_code")
    if returned.status == "error" and isinstance(code, str) and code in RUNTIME_CODES:
        raise JSONLimitError(f"output.error_code {code!r} is reserved for the runtime")
    return returned


def error_result(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """The call result of a failure the runtime detected."""
    return {"status": "error", "output": {"error_code": code, "message": message[:500], **extra}}
