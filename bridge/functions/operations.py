"""Admission of one `api.invoke` request: shape, capability, limits; then the host call.

Every request the sandbox posts becomes an `OperationRecord`, refused ones included, so the
audit log and `functions run` show everything a Function attempted.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from bridge.control.function_capabilities import (
    APPROVAL_REQUEST,
    FORBIDDEN_TOOL,
    Action,
    dispatch_capability,
    native_tool_capability,
)
from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionSpec
from bridge.functions.host import (
    ApprovalInput,
    DispatchInput,
    FunctionHost,
    InvocationInfo,
    NativeToolInput,
)
from bridge.functions.results import JSONLimitError, OperationCode, parse_limited

M = TypeVar("M", bound=BaseModel)


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    action: Action
    input: dict[str, Any]


@dataclass
class OperationRecord:
    """One attempted `api.invoke`. `may_have_effect` marks work the server may have accepted."""

    index: int
    action: str | None
    capability: str | None
    status: str = "running"  # refused | running | completed | failed | cancelled
    error_code: str | None = None
    message: str | None = None
    input: dict[str, Any] | None = None
    outcome: dict[str, Any] | None = None
    may_have_effect: bool = False

    def summary(self) -> dict[str, Any]:
        """JSON fields for the audit log and the dry-run report."""
        return {
            "index": self.index,
            "action": self.action,
            "capability": self.capability,
            "status": self.status,
            "error_code": self.error_code,
            "message": self.message,
        }


@dataclass
class Admitted:
    record: OperationRecord
    call: Callable[[], Coroutine[Any, Any, BaseModel]]
    is_approval: bool


class Refused(Exception):
    def __init__(self, record: OperationRecord, code: str, message: str) -> None:
        super().__init__(message)
        record.status, record.error_code, record.message = "refused", code, message
        self.record = record


@dataclass
class OperationGate:
    """Admits the requests of one invocation against its capabilities and limits."""

    spec: FunctionSpec
    host: FunctionHost
    limits: FunctionLimits
    info: InvocationInfo
    records: list[OperationRecord] = field(default_factory=list)
    running: int = 0
    pending_approvals: int = 0

    def admit(self, text: str | None, problem: str | None) -> Admitted:
        """Admit one posted request or raise `Refused` (already recorded)."""
        record = OperationRecord(index=len(self.records), action=None, capability=None)
        self.records.append(record)
        if len(self.records) > self.limits.operations_per_call:
            raise Refused(
                record,
                OperationCode.OPERATION_LIMIT,
                f"at most {self.limits.operations_per_call} operations per call",
            )
        if problem is not None or text is None:
            raise Refused(record, OperationCode.INVALID_INPUT, problem or "request is not JSON")
        request = self._parse(record, text)
        record.action = request.action.value
        admitted = self._route(record, request)
        if self.running >= self.limits.concurrent_operations:
            raise Refused(
                record,
                OperationCode.CONCURRENCY_LIMIT,
                f"at most {self.limits.concurrent_operations} operations at once",
            )
        if admitted.is_approval and self.pending_approvals >= self.limits.pending_approvals:
            raise Refused(
                record,
                OperationCode.APPROVAL_LIMIT,
                f"at most {self.limits.pending_approvals} approvals pending at once",
            )
        return admitted

    def _parse(self, record: OperationRecord, text: str) -> _Request:
        limits = self.limits
        try:
            # The driver caps requests too, but it runs beside owner code: check again here.
            value = parse_limited(
                text,
                chars=limits.result_chars,
                depth=limits.result_depth + 1,  # the {action, input} envelope adds a level
                members=limits.result_members,
            )
            return _Request.model_validate(value)
        except (ValueError, RecursionError, JSONLimitError) as exc:
            raise Refused(record, OperationCode.INVALID_INPUT, _explain(exc)) from None

    def _route(self, record: OperationRecord, request: _Request) -> Admitted:
        host, info = self.host, self.info
        if request.action is Action.APPROVAL_REQUEST:
            record.capability = APPROVAL_REQUEST
            approval = self._shape(record, ApprovalInput, request.input)
            self._require(record, APPROVAL_REQUEST)
            return Admitted(record, lambda: host.request_approval(approval, info), True)
        if request.action is Action.COMMAND_DISPATCH:
            dispatch = self._shape(record, DispatchInput, request.input)
            self._require(record, dispatch_capability(dispatch.executor))
            record.may_have_effect = True
            return Admitted(record, lambda: host.dispatch_command(dispatch, info), False)
        native = self._shape(record, NativeToolInput, request.input)
        self._require(record, native_tool_capability(native.tool))
        if native.tool == FORBIDDEN_TOOL or not host.is_registered_tool(native.tool):
            raise Refused(
                record, OperationCode.UNKNOWN_TOOL, f"no native tool {native.tool!r} is registered"
            )
        record.may_have_effect = True
        return Admitted(record, lambda: host.call_native_tool(native, info), False)

    def _shape(self, record: OperationRecord, model: type[M], value: dict[str, Any]) -> M:
        record.input = value
        try:
            return model.model_validate(value)
        except ValidationError as exc:
            raise Refused(record, OperationCode.INVALID_INPUT, _explain(exc)) from None

    def _require(self, record: OperationRecord, capability: str) -> None:
        record.capability = capability
        if capability not in self.spec.capabilities:
            raise Refused(
                record,
                OperationCode.CAPABILITY_MISSING,
                f"the Function does not declare {capability!r}",
            )


def _explain(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'input'}: {error['msg']}"
            for error in exc.errors()[:3]
        )
    return str(exc)[:300]
