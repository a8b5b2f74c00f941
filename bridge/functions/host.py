"""What a Function can reach outside its sandbox: the host interface behind `api.invoke`.

The runtime checks capabilities, input shapes and limits, then calls one `FunctionHost` method.
The real host (the tool registry and the link's prompt machinery) implements it elsewhere;
`DryRunHost` records dispatches and native calls without performing them, for `functions run`.

A host refuses an operation by raising `OperationRefused(code, message)`; the Function receives
that as a catchable error with the same code. Outcomes are returned as data, and keep
"accepted", "dispatched" and "completed" apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bridge.errors import FunctionError

# An exact player name or a dashed UUID; the host resolves it against the online list.
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
PLAYER_REF = rf"^([A-Za-z0-9_]{{1,16}}|{_UUID})$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InteractionOption(_Strict):
    id: str = Field(pattern=r"^[a-z0-9_-]{1,32}$")
    label: str = Field(min_length=1, max_length=64)


class Interaction(_Strict):
    type: Literal["confirm", "select"]
    title: str = Field(min_length=1, max_length=64)
    message: str = Field(min_length=1, max_length=512)
    options: list[InteractionOption] = Field(default_factory=list, max_length=8)

    @model_validator(mode="after")
    def _options_fit_the_type(self) -> Interaction:
        if self.type == "select" and len(self.options) < 2:
            raise ValueError("a select interaction needs at least two options")
        if self.type == "confirm" and len(self.options) not in (0, 2):
            raise ValueError("a confirm interaction takes no options or exactly two (yes, no)")
        ids = [option.id for option in self.options]
        if len(set(ids)) != len(ids):
            raise ValueError("option ids must be unique")
        return self


class ApprovalInput(_Strict):
    """`approval.request`: a prompt to one exact online player."""

    player: str = Field(pattern=PLAYER_REF)
    interaction: Interaction
    timeout_ms: int = Field(ge=1_000, le=600_000)


class DispatchInput(_Strict):
    """`command.dispatch`: a command run as written, by the console or an exact online player."""

    executor: Literal["console", "player"]
    player: str | None = Field(default=None, pattern=PLAYER_REF)
    command: str = Field(min_length=1, max_length=32_000)

    @model_validator(mode="after")
    def _player_matches_executor(self) -> DispatchInput:
        if self.executor == "player" and self.player is None:
            raise ValueError("a player executor needs `player` (exact online name or UUID)")
        if self.executor == "console" and self.player is not None:
            raise ValueError("a console executor takes no `player`")
        return self


class NativeToolInput(_Strict):
    """`native_tool.call`: one declared native handler with its arguments."""

    tool: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    arguments: dict[str, Any] = Field(default_factory=dict)


class ApprovalAnswer(_Strict):
    """`approval_status` is the player's answer; `choice` the option id picked, if any."""

    approval_status: Literal["approved", "denied", "timeout", "cancelled"]
    choice: str | None = None
    player: str


class DispatchOutcome(_Strict):
    """`dispatched` means the server accepted the command; `execution_result` what it did."""

    dispatch_status: Literal["dispatched", "not_dispatched"]
    execution_result: Literal["success", "failure", "unknown"]
    feedback: list[str] = Field(default_factory=list)
    executor: Literal["console", "player"]
    player: str | None = None


class NativeToolOutcome(_Strict):
    """The handler's redacted output; `operation_status` says whether it ran to completion."""

    operation_status: Literal["completed", "failed", "not_performed"]
    output: Any = None
    error_code: str | None = None


@dataclass(frozen=True)
class InvocationInfo:
    """Who is calling which Function; hosts use it for prompts, attribution and logs."""

    invocation_id: str
    function: str
    source_sha256: str
    player: str
    player_uuid: str | None = None


class OperationRefused(FunctionError):
    """A host refused an operation (player offline, tool refused it...). `code` is stable."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class FunctionHost(Protocol):
    def is_registered_tool(self, name: str) -> bool:
        """Whether a native tool handler of exactly this name exists."""

    async def request_approval(
        self, request: ApprovalInput, invocation: InvocationInfo
    ) -> ApprovalAnswer:
        """Show the prompt and wait (up to its timeout) for the player's answer."""

    async def dispatch_command(
        self, request: DispatchInput, invocation: InvocationInfo
    ) -> DispatchOutcome:
        """Dispatch as written; no whitelist, no consent (the Function asks first if it must)."""

    async def call_native_tool(
        self, request: NativeToolInput, invocation: InvocationInfo
    ) -> NativeToolOutcome:
        """Run the handler with the same validation and redaction as a model call."""


@dataclass
class DryRunHost:
    """Performs nothing: records dispatches and native calls, answers approvals as told.

    `tools` is the set of native handlers treated as registered; `None` means every tool.
    """

    approve: Literal["yes", "no", "timeout"] = "yes"
    tools: frozenset[str] | None = None
    recorded: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    check_dispatch: Callable[[DispatchInput, InvocationInfo], None] | None = None
    """Raises the `OperationRefused` a live run would meet before dispatching (the never list,
    `bridge.functions.dispatch_check`); None judges nothing."""

    def is_registered_tool(self, name: str) -> bool:
        return self.tools is None or name in self.tools

    async def request_approval(
        self, request: ApprovalInput, invocation: InvocationInfo
    ) -> ApprovalAnswer:
        self.recorded.append(("approval.request", request.model_dump()))
        if self.approve == "timeout":
            return ApprovalAnswer(approval_status="timeout", player=request.player)
        if self.approve == "no":
            return ApprovalAnswer(approval_status="denied", player=request.player)
        options = request.interaction.options
        choice = options[0].id if options else None
        return ApprovalAnswer(approval_status="approved", choice=choice, player=request.player)

    async def dispatch_command(
        self, request: DispatchInput, invocation: InvocationInfo
    ) -> DispatchOutcome:
        self.recorded.append(("command.dispatch", request.model_dump()))
        if self.check_dispatch is not None:
            self.check_dispatch(request, invocation)
        return DispatchOutcome(
            dispatch_status="not_dispatched",
            execution_result="unknown",
            feedback=["dry run: recorded, not performed"],
            executor=request.executor,
            player=request.player,
        )

    async def call_native_tool(
        self, request: NativeToolInput, invocation: InvocationInfo
    ) -> NativeToolOutcome:
        self.recorded.append(("native_tool.call", request.model_dump()))
        return NativeToolOutcome(operation_status="not_performed")
