"""One Function invocation: drive the sandbox, admit and perform operations, enforce limits.

The loop: evaluate the owner source, start onCall, then repeatedly read the outbox
(`__mineclaw.step()`), start admitted host operations as tasks, and settle finished ones back
into the sandbox. Each evaluation is one synchronous segment with its own time limit; the whole
loop runs under the workflow limit. Whatever ends the loop (result, error, limit, cancel), the
`finally` cancels every operation still pending and disposes of the isolate.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bridge.control.function_limits import FunctionLimits
from bridge.functions.crossloop import run_on
from bridge.functions.driver_report import ReportError, TooManyRequests, read_report
from bridge.functions.engine import Engine, Sandbox, SandboxError, WorkersBusy
from bridge.functions.host import (
    ApprovalAnswer,
    InvocationInfo,
    NativeToolOutcome,
    OperationRefused,
)
from bridge.functions.operations import Admitted, OperationGate, OperationRecord, Refused
from bridge.functions.results import (
    RUNTIME_CODES,
    ErrorCode,
    JSONLimitError,
    OperationCode,
    dump_limited,
    error_result,
    parse_limited,
    parse_return,
)
from bridge.store.audit_sink import AuditSink, JSONValue
from bridge.unicode_text import valid_json, valid_text

logger = logging.getLogger(__name__)

Settlement = tuple[int, bool, dict[str, Any]]
T = TypeVar("T")


class _Failure(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: str = Field(max_length=64)
    message: str = Field(max_length=2_000)


class _State(BaseModel):
    """What `__mineclaw.step()` reports; malformed means a tampered driver.

    `pending` means the microtasks of the last segment have not run yet: ask again.
    """

    model_config = ConfigDict(extra="forbid")
    pending: bool
    requests: list[tuple[int, str | None, str | None]] = Field(default_factory=list)
    dropped: int = Field(default=0, ge=0)
    done: bool = False
    result: str | None = None
    failure: _Failure | None = None


_MIB = 1024 * 1024
# A pending step is answered again after the checkpoint, which runs right after the task that
# answered; more pending answers than this mean a driver that will never report.
_MAX_PENDING_POLLS = 1_000
_STEP = "__mineclaw.step()"
_PENDING = '{"pending":true}'


def state_chars(limits: FunctionLimits) -> int:
    """The longest state an honest driver reports: the result and every request at most
    `result_chars` each, escaped; a worker refuses a longer one itself (`result_too_large`)."""
    return 4_096 + 3 * limits.result_chars * (limits.operations_per_call + 2)


class _Stop(Exception):
    """Ends the drive loop with a runtime-made result."""

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__(result["output"]["error_code"])
        self.result = result


def _js_string(text: str) -> str:
    # JSON text is a valid JavaScript string literal (ES2019 made the two agree).
    return json.dumps(text)


@dataclass
class Invocation:
    """Runs one validated call. Create per call; `run` once."""

    info: InvocationInfo
    source: str
    arguments: dict[str, Any]
    limits: FunctionLimits
    engine: Engine
    gate: OperationGate
    audit: AuditSink
    home: asyncio.AbstractEventLoop
    """The bridge's loop: host calls and audit records run there, wherever `drive` runs."""
    # Operations run as tasks on the home loop; finished ones come back through `_finished`
    # (on the loop `drive` runs on). `_outstanding` is counted there, `_home_tasks` at home.
    _outstanding: int = 0
    _received: int = 0
    _over_limit: int = 0
    """Requests past `operations_per_call`: counted, recorded once at the end."""
    runtime_code: str | None = None
    """The `error_code` of a failure the runtime detected, if the call ended with one."""
    worker_lost: bool = False
    """The call ended with its worker process killed or crashed (`function.worker_lost`)."""
    _finished: asyncio.Queue[tuple[Settlement, Admitted]] | None = None
    _home_tasks: set[asyncio.Task[Settlement]] = field(default_factory=set)

    @property
    def records(self) -> list[OperationRecord]:
        return self.gate.records

    async def drive(self) -> dict[str, Any]:
        """Run to a result. Cancelling the caller cancels everything this started."""
        self._finished = asyncio.Queue()
        try:
            sandbox = await self.engine.fresh(
                heap_bytes=self.limits.heap_mb * _MIB,
                memory_bytes=self.limits.worker_memory_mb * _MIB,
                tenant=self.info.player_uuid or self.info.player,
                value_chars=state_chars(self.limits),
            )
        except WorkersBusy as exc:
            return self.failed(ErrorCode.WORKERS_BUSY, str(exc))
        except SandboxError as exc:
            return self.failed(ErrorCode.ENGINE_UNAVAILABLE, str(exc))
        try:
            return await self._loop(sandbox)
        except _Stop as stop:
            return stop.result
        except SandboxError as exc:
            if exc.lost is not None:
                self.worker_lost = True
                self._audit(
                    "function.worker_lost", {**self._who(), "error_code": exc.code, **exc.lost}
                )
            return self.failed(exc.code, str(exc))
        finally:
            await self._cancel_operations()
            await sandbox.dispose()
            self._record_over_limit()

    def failed(self, code: str, message: str) -> dict[str, Any]:
        """An error result that also lists effects the server may already have accepted."""
        self.runtime_code = code
        return error_result(code, message, **self.effects())

    def effects(self) -> dict[str, Any]:
        effects = [
            {**record.summary(), "note": "accepted by the server; cannot be rolled back"}
            if record.status == "completed"
            else {**record.summary(), "note": "was in flight; the server may have accepted it"}
            for record in self.records
            if record.may_have_effect and record.status in ("completed", "cancelled")
        ]
        return {"effects_not_rolled_back": effects} if effects else {}

    async def _segment(self, sandbox: Sandbox, script: str) -> str | None:
        return await sandbox.evaluate(script, timeout_s=self.limits.sync_segment_ms / 1000)

    async def _loop(self, sandbox: Sandbox) -> dict[str, Any]:
        limits = self.limits
        context = {"args": self.arguments, "player": {"name": self.info.player}}
        config = {
            "maxPosted": limits.operations_per_call + 1,
            "requestChars": limits.result_chars,
            "resultChars": limits.result_chars,
        }
        # One segment for the owner's top level and the start of onCall. The leading ";" on
        # its own line ends any statement the source left open, so a source that does not
        # parse alone cannot parse here either.
        start = (
            f"\n;__mineclaw.start({_js_string(json.dumps(context))}, "
            f"{_js_string(json.dumps(config))});"
        )
        state = await self._then_step(sandbox, self.source + start)
        while True:
            settlements = self._admit_all(state)
            if state.done:
                return self._final(state)
            ready = [item for item in settlements if item is not None]
            if not ready:
                if not self._outstanding:
                    raise _Stop(
                        self.failed(
                            ErrorCode.WORKFLOW_STALLED,
                            "onCall awaits something that can never settle",
                        )
                    )
                assert self._finished is not None
                ready.append(self._collect(await self._finished.get()))
                while not self._finished.empty():
                    ready.append(self._collect(self._finished.get_nowait()))
            script = "".join(
                f"__mineclaw.settle({op_id}, {'true' if ok else 'false'}, "
                f"{_js_string(json.dumps(payload))});"
                for op_id, ok, payload in ready
            )
            state = await self._then_step(sandbox, script)

    async def _then_step(self, sandbox: Sandbox, script: str) -> _State:
        """Run `script`, then step until the driver reports (in one exchange with a worker)."""
        text = await sandbox.evaluate_then(
            script,
            _STEP,
            timeout_s=self.limits.sync_segment_ms / 1000,
            repeat_while=_PENDING,
            limit=_MAX_PENDING_POLLS,
        )
        state = self._read_state(text)
        return await self._step(sandbox) if state.pending else state

    async def _step(self, sandbox: Sandbox) -> _State:
        for _ in range(_MAX_PENDING_POLLS):
            state = self._read_state(await self._segment(sandbox, _STEP))
            if not state.pending:
                return state
        raise _Stop(self.failed(ErrorCode.PROTOCOL_ERROR, "the sandbox driver never reported"))

    def _read_state(self, text: str | None) -> _State:
        if text is not None and len(text) <= state_chars(self.limits):
            # The driver posts at most one request past the limit, over the whole call: a
            # report listing more is forged, and is refused after reading that many.
            most = self.limits.operations_per_call + 1 - self._received
            try:
                report = read_report(valid_text(text), max(most, 0))
            except TooManyRequests:
                # Counted as far as it was read: the rest of a forged list is not worth a look.
                self._over_limit += max(most, 0) + 1
                limit = self.limits.operations_per_call
                raise _Stop(
                    self.failed(
                        ErrorCode.PROTOCOL_ERROR,
                        f"the sandbox reported over {self._received + max(most, 0)} "
                        f"api.invoke requests; at most {limit} are allowed",
                    )
                ) from None
            except ReportError:
                pass
            else:
                try:
                    # A thrown string with a lone surrogate arrives as a JSON escape of one.
                    return _State.model_validate(valid_json(report))
                except ValidationError:
                    pass
        raise _Stop(self.failed(ErrorCode.PROTOCOL_ERROR, "the sandbox driver was tampered with"))

    def _admit_all(self, state: _State) -> list[Settlement | None]:
        """Admit what the bridge received, counting every request itself: however many the
        sandbox reports, at most `operations_per_call` become records; the rest are counted
        (with the ones the driver dropped) into one refusal record at the end."""
        limit = self.limits.operations_per_call
        self._received += len(state.requests)
        if self._received > limit + 1:
            # The driver posts at most one request past the limit: this sandbox lies.
            self._over_limit += len(state.requests) + state.dropped
            raise _Stop(
                self.failed(
                    ErrorCode.PROTOCOL_ERROR,
                    f"the sandbox reported {self._received} api.invoke requests; "
                    f"at most {limit} are allowed",
                )
            )
        allowance = max(0, limit - len(self.records))
        admitted = [self._admit(*request) for request in state.requests[:allowance]]
        over = state.requests[allowance:]
        self._over_limit += len(over) + state.dropped
        refusal = {
            "code": OperationCode.OPERATION_LIMIT,
            "message": f"at most {limit} operations per call",
        }
        admitted += [(op_id, False, refusal) for op_id, _, _ in over]
        return admitted

    def _final(self, state: _State) -> dict[str, Any]:
        if state.failure is not None:
            code, message = state.failure.code, state.failure.message
            if code in RUNTIME_CODES:
                # Only the runtime ends a call with these; the sandbox can only claim them.
                message = f"the script reported error_code {code!r}, which only the runtime sets"
                code = ErrorCode.SCRIPT_ERROR
            return self.failed(code, message)
        if state.result is None:
            return self.failed(ErrorCode.INVALID_RESULT, "onCall returned no result")
        limits = self.limits
        try:
            value = parse_limited(
                state.result,
                chars=limits.result_chars,
                depth=limits.result_depth,
                members=limits.result_members,
            )
        except JSONLimitError as exc:
            return self.failed(ErrorCode.RESULT_TOO_LARGE, f"result: {exc}")
        try:
            return parse_return(value).model_dump()
        except JSONLimitError as exc:
            return self.failed(ErrorCode.INVALID_RESULT, str(exc))

    def _admit(self, op_id: int, text: str | None, problem: str | None) -> Settlement | None:
        try:
            admitted = self.gate.admit(text, problem)
        except Refused as refused:
            self._record_operation(refused.record)
            return op_id, False, {"code": refused.record.error_code, "message": str(refused)}
        self.gate.running += 1
        if admitted.is_approval:
            self.gate.pending_approvals += 1
        self._outstanding += 1
        # FIFO on the home loop: every start lands before `_cancel_at_home` can run.
        self.home.call_soon_threadsafe(
            self._start_at_home, op_id, admitted, asyncio.get_running_loop()
        )
        return None

    def _collect(self, item: tuple[Settlement, Admitted]) -> Settlement:
        settlement, admitted = item
        self._outstanding -= 1
        self.gate.running -= 1
        if admitted.is_approval:
            self.gate.pending_approvals -= 1
        return settlement

    def _start_at_home(
        self, op_id: int, admitted: Admitted, driver_loop: asyncio.AbstractEventLoop
    ) -> None:
        task = self.home.create_task(self._perform(op_id, admitted))
        self._home_tasks.add(task)

        def report(done: asyncio.Task[Settlement]) -> None:
            self._home_tasks.discard(done)
            if not done.cancelled() and self._finished is not None:
                driver_loop.call_soon_threadsafe(
                    self._finished.put_nowait, (done.result(), admitted)
                )

        task.add_done_callback(report)

    async def _cancel_at_home(self) -> None:
        tasks = list(self._home_tasks)
        for task in tasks:
            task.cancel()
        # Waiting here means the host has seen every cancellation (a prompt withdrawn, a
        # wait abandoned) before the invocation reports its result.
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _perform(self, op_id: int, admitted: Admitted) -> Settlement:
        """Runs on the home loop."""
        record = admitted.record
        try:
            outcome = await admitted.call()
        except asyncio.CancelledError:
            record.status, record.error_code = "cancelled", OperationCode.CANCELLED
            self._record_operation(record)
            raise
        except Exception as exc:  # noqa: BLE001 - any host fault becomes a catchable error
            if isinstance(exc, OperationRefused):
                code, message = exc.code[:64], exc.message[:500]
            else:
                logger.exception("host failed on operation %s of %s", record.index, self.info)
                code, message = OperationCode.HOST_ERROR, "the host failed; see the bridge log"
            record.status, record.error_code, record.message = "failed", code, message
            record.may_have_effect = False
            self._record_operation(record)
            return op_id, False, {"code": code, "message": message}
        payload = outcome.model_dump(mode="json")
        record.outcome = payload
        record.status = "completed"
        record.may_have_effect = _accepted(outcome, payload)
        self._record_operation(record)
        limits = self.limits
        try:
            dump_limited(
                payload,
                chars=limits.result_chars,
                depth=limits.result_depth,
                members=limits.result_members,
            )
        except JSONLimitError as exc:
            return op_id, False, {"code": OperationCode.HOST_ERROR, "message": f"outcome: {exc}"}
        return op_id, True, payload

    async def _cancel_operations(self) -> None:
        if self._outstanding:
            self._outstanding = 0
            await run_on(self.home, self._cancel_at_home())

    def _record_operation(self, record: OperationRecord) -> None:
        fields: dict[str, JSONValue] = {**self._who(), **record.summary()}
        self._audit("function.operation", fields)

    def _record_over_limit(self) -> None:
        if not self._over_limit:
            return
        fields: dict[str, JSONValue] = {
            **self._who(),
            "status": "refused",
            "error_code": OperationCode.OPERATION_LIMIT,
            "dropped": self._over_limit,
        }
        self._audit("function.operation", fields)

    def _audit(self, kind: str, fields: dict[str, JSONValue]) -> None:
        if _running_on(self.home):
            self.audit.record(kind, fields)
        else:
            # FIFO on the home loop: these land before the invocation's result does.
            self.home.call_soon_threadsafe(self.audit.record, kind, fields)

    def _who(self) -> dict[str, JSONValue]:
        return {
            "invocation_id": self.info.invocation_id,
            "function": self.info.function,
            "source_sha256": self.info.source_sha256,
        }


def _running_on(loop: asyncio.AbstractEventLoop) -> bool:
    return asyncio.get_running_loop() is loop


def _accepted(outcome: BaseModel, payload: dict[str, Any]) -> bool:
    if isinstance(outcome, ApprovalAnswer):
        return False
    if isinstance(outcome, NativeToolOutcome):
        return payload.get("operation_status") == "completed"
    return payload.get("dispatch_status") == "dispatched"
