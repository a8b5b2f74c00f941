"""The one path every tool call takes, from the model or from the CLI.

In order: the tool must be in the turn's catalogue (a gated tool is answered like a missing
one), the arguments must be a JSON object matching the tool's schema, the player must be past
the tool's cooldown, then the handler runs. The cooldown spaces rounds and turns: the calls of
one model reply (one round) are admitted together once the first of them is.

Whatever happens becomes a ``ToolOutcome``: a refusal or a handler exception is an error
result, never an exception out of here, except cancellation, which goes on up so the turn can
end. The outcome is redacted before it leaves and an audit record says which path it took.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from bridge.errors import MineclawError
from bridge.providers.items import ToolCall, ToolResult
from bridge.redaction import Redactor
from bridge.schemas import TookTooLong, Violation
from bridge.schemas.safe_schema import BOUND_S
from bridge.store.audit_sink import AuditSink
from bridge.tools.registry import READ_EFFECTS, BoundTool, CallContext, TurnTools
from bridge.tools.results import ErrorCode, ToolFailure, ToolOutcome


class Asker(Protocol):
    """The player a turn answers (``bridge.turns.ports.PlayerRef`` is one)."""

    @property
    def uuid(self) -> str: ...

    @property
    def name(self) -> str: ...


class TurnOfCall(Protocol):
    """What the invoker needs of the turn a call belongs to. The turn engine's ``TurnContext``
    is one; declared here so the tools stay below the turn loop (docs/architecture.md)."""

    @property
    def turn_id(self) -> str: ...

    @property
    def player(self) -> Asker: ...

    @property
    def round(self) -> int: ...

    @property
    def lane_id(self) -> str: ...


log = logging.getLogger(__name__)

MAX_ARGUMENT_CHARS = 64 * 1024
MAX_SCHEMA_ERRORS = 3


class Cooldowns:
    """Per player, per tool: when the last admitted call started.

    Shared by every turn of the process (a cooldown outlives the turn that started it); the
    clock is injectable so tests never sleep. ``cooldown_ms`` is a number or a function giving
    the setting in force: it is read at every call, so a reload that changes it applies to the
    next call, in both directions (the last call's time is kept, not a precomputed deadline).

    A call made in a ``batch`` (the round of a turn: the calls of one model reply) is admitted
    when an earlier call of the same batch was: "set day and clear the weather" is two
    ``run_command`` calls of one reply, and both run. The next round waits out the cooldown.
    """

    def __init__(
        self,
        *,
        cooldown_ms: int | Callable[[], int],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._cooldown_ms = cooldown_ms
        self._clock = clock
        self._last: dict[tuple[str, str], tuple[float, str | None]] = {}

    @property
    def cooldown_s(self) -> float:
        setting = self._cooldown_ms
        return (setting() if callable(setting) else setting) / 1000

    def admit(self, player: str, tool: str, *, batch: str | None = None) -> float | None:
        """``None`` and the cooldown starts, or the seconds still to wait."""
        cooldown_s = self.cooldown_s
        now = self._clock()
        key = (player, tool)
        last = self._last.get(key)
        if last is not None:
            started, last_batch = last
            if batch is not None and batch == last_batch:
                return None  # the same reply: its first call already started the cooldown
            if now < started + cooldown_s:
                return started + cooldown_s - now
        # Kept under a zero cooldown too: a reload that raises it counts from the last call.
        self._last[key] = (now, batch)
        if len(self._last) > 4096:  # forget expired entries so the map stays small
            self._last = {k: v for k, v in self._last.items() if v[0] + cooldown_s > now}
        return None


class ToolInvoker:
    """Runs calls against one turn's catalogue; implements the turn engine's ``ToolRunner``."""

    def __init__(
        self,
        tools: TurnTools,
        *,
        cooldowns: Cooldowns,
        redactor: Redactor,
        audit: AuditSink,
        granted: frozenset[str] = frozenset(),
    ) -> None:
        """``granted``: the asker's permission nodes, handed to every call (`CallContext`)."""
        self.tools = tools
        self._granted = granted
        self._cooldowns = cooldowns
        self._redactor = redactor
        self._audit = audit

    async def run(self, call: ToolCall, context: TurnOfCall) -> ToolResult:
        """The turn engine's entry: JSON text arguments in, JSON text result out."""
        call_context = CallContext(
            turn_id=context.turn_id,
            call_id=call.call_id,
            player_uuid=context.player.uuid,
            player_name=context.player.name,
            batch=f"{context.turn_id}#{context.round}" if context.round else None,
            lane_id=context.lane_id,
            granted=self._granted,
        )
        outcome = await self.invoke(call.name, call.arguments, call_context)
        tool = self.tools.tools.get(call.name)
        personal = tool is not None and tool.personal
        return ToolResult(call_id=call.call_id, output=outcome.to_json(), personal=personal)

    def side_effect_free(self, name: str) -> bool:
        """Reads (workspace, game) change nothing; a tool this turn lacks is answered at once."""
        tool = self.tools.tools.get(name)
        return tool is None or tool.effect in READ_EFFECTS

    async def invoke(self, name: str, arguments: str | Any, context: CallContext) -> ToolOutcome:
        """One call; ``arguments`` is JSON text (from a model) or an already parsed value."""
        handler = "-"
        try:
            tool = self.tools.tools.get(name)
            admit = self.tools.admit
            if tool is not None and admit is not None and not admit(name, tool.entry):
                tool = None  # refused at the call too, answered like a tool that is not there
            if tool is None:
                raise ToolFailure(
                    ErrorCode.UNKNOWN_TOOL, f"no tool named {name!r} is available in this turn"
                )
            handler = tool.entry.handler
            parsed = await _validated(tool, arguments)
            wait = self._cooldowns.admit(context.player_uuid, name, batch=context.batch)
            if wait is not None:
                raise ToolFailure(
                    ErrorCode.COOLDOWN,
                    f"{name} was used moments ago; try again in {max(1, round(wait * 1000))} ms",
                )
            outcome = ToolOutcome.success(name, await tool.run(parsed, context))
        except ToolFailure as exc:
            outcome = ToolOutcome.failure(name, exc.code, exc.message)
        except BaseException as exc:
            if not isinstance(exc, Exception):  # cancellation and interpreter exits go on
                self._record(context, name, handler, "cancelled")
                raise
            outcome = _unexpected(name, exc)
        safe = self._redact(outcome)
        self._record(context, name, handler, "ok" if safe.ok else str(safe.error_code))
        return safe

    def _redact(self, outcome: ToolOutcome) -> ToolOutcome:
        dumped = outcome.model_dump(mode="json")
        try:
            cleaned = self._redactor.redact_json(dumped)
        except Exception:  # a result that cannot be redacted must not leave at all
            log.exception("redaction failed for a %s result", outcome.tool)
            return ToolOutcome.failure(
                outcome.tool, ErrorCode.INTERNAL_ERROR, "the result could not be redacted"
            )
        if cleaned is dumped:  # nothing was replaced: the outcome goes out as it is
            return outcome
        return ToolOutcome.model_validate(cleaned)

    def _record(self, context: CallContext, name: str, handler: str, status: str) -> None:
        self._audit.record(
            "tool.invoke",
            {
                "turn_id": context.turn_id,
                "call_id": context.call_id,
                "player": context.player_name,
                "tool": name,
                "handler": handler,
                "status": status,
            },
        )


async def _validated(tool: BoundTool, arguments: str | Any) -> dict[str, Any]:
    size = len(arguments) if isinstance(arguments, str) else None
    if isinstance(arguments, str):
        if len(arguments) > MAX_ARGUMENT_CHARS:
            raise ToolFailure(
                ErrorCode.INVALID_ARGUMENTS, f"arguments are over {MAX_ARGUMENT_CHARS} characters"
            )
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ToolFailure(
                ErrorCode.INVALID_ARGUMENTS, f"arguments are not valid JSON: {exc}"
            ) from None
    if not isinstance(arguments, dict):
        raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, "arguments must be a JSON object")
    if size is None:
        try:
            size = len(json.dumps(arguments, default=str))
        except (TypeError, ValueError, RecursionError):
            raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, "arguments are not JSON") from None
    try:
        found = await tool.schema.checked(arguments, size=size)
    except TookTooLong:
        raise ToolFailure(
            ErrorCode.INVALID_ARGUMENTS,
            f"checking the arguments against {tool.name}'s schema took over {BOUND_S:g} s",
        ) from None
    errors = sorted(found, key=lambda e: [str(part) for part in e.path])
    if errors:
        details = "; ".join(_describe(error) for error in errors[:MAX_SCHEMA_ERRORS])
        more = len(errors) - MAX_SCHEMA_ERRORS
        suffix = f" (and {more} more)" if more > 0 else ""
        raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, f"{details}{suffix}")
    return arguments


def _describe(error: Violation) -> str:
    return f"{error.where or '(arguments)'}: {error.message}"


def _unexpected(name: str, exc: Exception) -> ToolOutcome:
    if isinstance(exc, MineclawError):
        return ToolOutcome.failure(name, ErrorCode.INTERNAL_ERROR, str(exc))
    # Details of an unplanned failure (paths, library text) go to the log, not to the model.
    log.exception("tool %s failed", name)
    return ToolOutcome.failure(name, ErrorCode.INTERNAL_ERROR, f"{name} failed unexpectedly")
