"""The Function runtime's entry point: `call_function` as the model uses it.

Exact name and arguments in, a JSON result out. Unknown, disabled and badly-called Functions are
answered without creating a sandbox; everything else runs as an `Invocation` under the workflow
limit, with start, every operation and the end (or timeout, or cancel) in the audit log, each
with the source hash.
"""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionsFile, FunctionSpec
from bridge.functions.arguments import InvalidArguments, validate_arguments
from bridge.functions.engine import Engine
from bridge.functions.host import FunctionHost, InvocationInfo
from bridge.functions.invocation import Invocation
from bridge.functions.operations import OperationGate, OperationRecord
from bridge.functions.results import ErrorCode, error_result
from bridge.functions.suspensions import Suspension, Suspensions
from bridge.store.audit_sink import AuditSink, JSONValue

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FunctionOutcome:
    """A finished call: `result` goes back to the model; the rest is for logs and reviews."""

    result: dict[str, Any]
    function: str
    invocation_id: str
    source_sha256: str | None
    operations: tuple[OperationRecord, ...] = ()


class FunctionRuntime:
    """Runs the Functions of one catalogue snapshot. Cheap to build per turn."""

    def __init__(
        self,
        *,
        catalogue: FunctionsFile,
        limits: FunctionLimits,
        engine: Engine,
        host: FunctionHost,
        audit: AuditSink,
        suspensions: Suspensions | None = None,
        on_suspended: Callable[[Suspension], None] | None = None,
        reviewed: Callable[[FunctionSpec], bool] | None = None,
    ) -> None:
        """`suspensions`: the bridge's count of lost workers per Function (none: never
        suspended); `on_suspended` hears of each suspension (the operators' notice);
        `reviewed`: whether a Function's source has a review record (asked only when
        ``require_review`` is on; None: not checked, as in the owner's dry run)."""
        self._catalogue = catalogue
        self._limits = limits
        self._engine = engine
        self._host = host
        self._audit = audit
        self._suspensions = suspensions
        self._on_suspended = on_suspended
        self._reviewed = reviewed

    async def call_function(
        self,
        name: str,
        arguments: Any,
        *,
        player: str,
        player_uuid: str | None = None,
        cancel: asyncio.Event | None = None,
    ) -> dict[str, Any]:
        """The model-facing tool: `{status, output}` for Function `name` called by `player`."""
        outcome = await self.invoke(
            name, arguments, player=player, player_uuid=player_uuid, cancel=cancel
        )
        return outcome.result

    async def invoke(
        self,
        name: str,
        arguments: Any,
        *,
        player: str,
        player_uuid: str | None = None,
        cancel: asyncio.Event | None = None,
    ) -> FunctionOutcome:
        """Run one call. Setting `cancel` stops it with a `cancelled` result; cancelling the
        awaiting task stops it too (recorded in the audit log) and re-raises."""
        invocation_id = secrets.token_hex(8)
        spec = self._catalogue.get(name)
        refusal: dict[str, Any] | None = None
        if spec is None:
            refusal = error_result(ErrorCode.UNKNOWN_FUNCTION, f"no Function named {name!r}")
        elif not spec.enabled:
            refusal = error_result(ErrorCode.FUNCTION_DISABLED, f"Function {name!r} is disabled")
        elif (
            self._limits.require_review and self._reviewed is not None and not self._reviewed(spec)
        ):
            refusal = error_result(
                ErrorCode.FUNCTION_UNREVIEWED,
                f"Function {name!r} changed since the owner last reviewed it",
            )
        elif left_s := self._suspended_s(spec.name, spec.source_sha256):
            refusal = error_result(
                ErrorCode.FUNCTION_SUSPENDED,
                f"Function {name!r} is suspended for {math.ceil(left_s / 60)} more minute(s): "
                "its calls kept killing their worker",
            )
        else:
            try:
                arguments = await validate_arguments(spec, arguments, self._limits)
            except InvalidArguments as exc:
                refusal = error_result(
                    ErrorCode.INVALID_ARGUMENTS, "arguments refused", violations=exc.violations
                )
        if refusal is not None or spec is None:
            assert refusal is not None
            self._audit.record(
                "function.refused",
                {
                    "invocation_id": invocation_id,
                    "function": name[:64],
                    "player": player,
                    "error_code": refusal["output"]["error_code"],
                },
            )
            return FunctionOutcome(refusal, name, invocation_id, None)
        # Only the name reaches the Function (ctx.player.name); the UUID is for the host.
        info = InvocationInfo(invocation_id, spec.name, spec.source_sha256, player, player_uuid)
        invocation = Invocation(
            info=info,
            source=spec.on_call,
            arguments=arguments,
            limits=self._limits,
            engine=self._engine,
            gate=OperationGate(spec, self._host, self._limits, info),
            audit=self._audit,
            home=asyncio.get_running_loop(),
        )
        result = await self._supervise(invocation, cancel)
        if invocation.worker_lost:
            self._count_loss(info)
        return FunctionOutcome(
            result, spec.name, invocation_id, spec.source_sha256, tuple(invocation.records)
        )

    def _suspended_s(self, function: str, source_sha256: str) -> float:
        if self._suspensions is None:
            return 0.0
        return self._suspensions.remaining_s(function, source_sha256)

    def _count_loss(self, info: InvocationInfo) -> None:
        if self._suspensions is None:
            return
        suspension = self._suspensions.lost(info.function, info.source_sha256, self._limits)
        if suspension is None:
            return
        logger.warning(
            "Function %s suspended for %d minutes: %d calls lost their worker",
            info.function,
            suspension.minutes,
            suspension.losses,
        )
        self._audit.record(
            "function.suspended",
            {
                "invocation_id": info.invocation_id,
                "function": info.function,
                "source_sha256": info.source_sha256,
                "losses": suspension.losses,
                "minutes": suspension.minutes,
            },
        )
        if self._on_suspended is not None:
            self._on_suspended(suspension)

    async def _supervise(
        self, invocation: Invocation, cancel: asyncio.Event | None
    ) -> dict[str, Any]:
        info = invocation.info
        who: dict[str, JSONValue] = {
            "invocation_id": info.invocation_id,
            "function": info.function,
            "source_sha256": info.source_sha256,
        }
        self._audit.record("function.start", {**who, "player": info.player})
        started = time.monotonic()

        def finish(kind: str, result: dict[str, Any]) -> dict[str, Any]:
            output = result["output"]
            # `error_code` is the runtime's alone; an error the Function returned itself is
            # recorded as such, its own code in a field of its own.
            fields: dict[str, JSONValue] = {
                **who,
                "status": result["status"],
                "error_code": invocation.runtime_code,
                "operations": len(invocation.records),
                "duration_ms": round((time.monotonic() - started) * 1000, 3),
            }
            own_code = output.get("error_code")
            if invocation.runtime_code is None and isinstance(own_code, str):
                fields["function_error_code"] = own_code[:64]
            if "effects_not_rolled_back" in output:
                fields["effects_not_rolled_back"] = len(output["effects_not_rolled_back"])
            self._audit.record(kind, fields)
            return result

        drive = asyncio.get_running_loop().create_task(self._engine.run(invocation.drive()))
        waiters: set[asyncio.Future[Any]] = {drive}
        cancelled_by_event: asyncio.Task[bool] | None = None
        if cancel is not None:
            cancelled_by_event = asyncio.get_running_loop().create_task(cancel.wait())
            waiters.add(cancelled_by_event)
        try:
            async with asyncio.timeout(self._limits.workflow_ms / 1000):
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        except TimeoutError:
            await _stop(drive)
            message = f"the workflow ran over {self._limits.workflow_ms} ms"
            return finish(
                "function.timeout",
                invocation.failed(ErrorCode.WORKFLOW_TIME_LIMIT, message),
            )
        except asyncio.CancelledError:
            await _stop(drive)
            finish("function.cancel", invocation.failed(ErrorCode.CANCELLED, "turn cancelled"))
            raise
        finally:
            if cancelled_by_event is not None:
                cancelled_by_event.cancel()
        if not drive.done():
            await _stop(drive)
            return finish(
                "function.cancel", invocation.failed(ErrorCode.CANCELLED, "workflow cancelled")
            )
        error = drive.exception()
        if error is not None:
            # A fault of the runtime itself, not of the Function: logged with its traceback,
            # answered without details.
            logger.error("Function %s failed inside the runtime", info, exc_info=error)
            message = "the Function runtime failed; see the bridge log"
            return finish("function.end", invocation.failed(ErrorCode.INTERNAL_ERROR, message))
        return finish("function.end", drive.result())


async def _stop(task: asyncio.Task[Any]) -> None:
    # Shielded from a second cancellation: the invocation's cleanup (cancelling operations,
    # disposing of the isolate) must run to the end.
    task.cancel()
    await asyncio.shield(asyncio.wait({task}))
