"""The real `FunctionHost`: the plugin link, the approval broker and the tool invoker.

- `command.dispatch` goes to the plugin as `command.dispatch`, as written (one leading `/` is
  dropped, as a player would type it). A player executor is resolved from an exact online name
  or UUID through `players.list`. "Dispatched" only means the server accepted the command:
  `execution_result` stays `unknown`, and feedback exists only for the console. Before it is
  sent, the command and every command it carries are judged against the never list with the
  server's resolution of their labels (`CommandJudge`, as `run_command` does): a never-listed,
  unknown or unreadable command is refused as `never_listed`; a capability is no opt-out, only
  the Function's own `allow_never: true` lets never-listed commands through.
- `native_tool.call` runs through the turn's `ToolInvoker`, the path a model call takes, so the
  arguments are validated against `tools.yml`, cooldowns apply, the result is redacted and the
  call is audited. A tool whose handler is `call_function` is never reachable.
- `approval.request` uses the `ApprovalBroker` that `run_command` confirmations use: a
  single-use token bound to the target and to this invocation's interaction. Cancelling the
  call closes the prompt; the player's later click finds nothing.

Failures the Function should handle come back as `OperationRefused` with a stable code:
`link_down`, `player_offline`, `not_shown`, `timeout`, `server_error`, `invalid_input`,
`approval_unavailable`, `unknown_tool`, `never_listed`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

from bridge.control.function_capabilities import FORBIDDEN_TOOL
from bridge.control.messages_file import ApprovalMessages
from bridge.control.never_categories import effective_categories
from bridge.functions.dispatch_check import (
    canonical_command,
    refuse_never_listed,
    wire_command,
)
from bridge.functions.host import (
    ApprovalAnswer,
    ApprovalInput,
    DispatchInput,
    DispatchOutcome,
    InvocationInfo,
    NativeToolInput,
    NativeToolOutcome,
    OperationRefused,
)
from bridge.link.codes import ErrorCode as LinkCode
from bridge.link.errors import LinkRequestError
from bridge.link.handler import Link
from bridge.link.messages import (
    ApprovalButton,
    CommandDispatch,
    CommandDispatchResult,
    PlayerRef,
    PlayersList,
    PlayersListResult,
    Text,
)
from bridge.policy.approvals import ApprovalBroker, ApprovalError, Subject
from bridge.policy.never_list import NeverList
from bridge.tools.command_judge import CommandJudge
from bridge.tools.invoke import ToolInvoker
from bridge.tools.plugin_access import APPROVALS, PluginAccess
from bridge.tools.registry import CallContext
from bridge.tools.results import ErrorCode as ToolCode
from bridge.tools.results import ToolFailure

log = logging.getLogger(__name__)

# Tool errors that mean the handler never ran: nothing was performed.
_NOT_PERFORMED = frozenset(
    {ToolCode.UNKNOWN_TOOL, ToolCode.INVALID_ARGUMENTS, ToolCode.COOLDOWN, ToolCode.UNAVAILABLE}
)
_PROMPT = "<title>: <message>"


@dataclass(frozen=True, slots=True)
class LiveHostSettings:
    """`dispatch_timeout_s`: how long the plugin may take to answer a dispatch (10 s, the
    link's own request limit)."""

    dispatch_timeout_s: float = 10.0


class LiveFunctionHost:
    """The host of the Function calls made by one `call_function` tool call (`origin`)."""

    def __init__(
        self,
        *,
        plugin: PluginAccess,
        broker: ApprovalBroker,
        tools: ToolInvoker,
        origin: CallContext,
        messages: Callable[[], ApprovalMessages],
        settings: LiveHostSettings = LiveHostSettings(),
        never: NeverList | None = None,
        never_opt_outs: frozenset[str] = frozenset(),
    ) -> None:
        """`never`: the never list in force (the built-in categories when None);
        `never_opt_outs`: the Functions written with `allow_never: true`."""
        self._plugin = plugin
        self._broker = broker
        self._tools = tools
        self._origin = origin
        self._messages = messages
        self._settings = settings
        self._native_calls = 0
        self._judge = CommandJudge(plugin, never or NeverList(effective_categories([], {})))
        self._never_opt_outs = never_opt_outs

    # ---- native tools

    def is_registered_tool(self, name: str) -> bool:
        tool = self._tools.tools.tools.get(name)
        # A tools.yml entry may give call_function another name: that is recursion too.
        return tool is not None and name != FORBIDDEN_TOOL and tool.entry.handler != FORBIDDEN_TOOL

    async def call_native_tool(
        self, request: NativeToolInput, invocation: InvocationInfo
    ) -> NativeToolOutcome:
        if not self.is_registered_tool(request.tool):
            raise OperationRefused("unknown_tool", f"no native tool {request.tool!r} is registered")
        self._native_calls += 1
        context = CallContext(
            turn_id=self._origin.turn_id,
            call_id=f"{self._origin.call_id}/{invocation.invocation_id}/{self._native_calls}",
            player_uuid=self._origin.player_uuid,
            player_name=self._origin.player_name,
        )
        outcome = await self._tools.invoke(request.tool, request.arguments, context)
        if outcome.ok:
            return NativeToolOutcome(operation_status="completed", output=outcome.result)
        code = outcome.error_code
        status = "not_performed" if code in _NOT_PERFORMED else "failed"
        return NativeToolOutcome(
            operation_status=status,
            output={"message": outcome.message},
            error_code=str(code) if code is not None else None,
        )

    # ---- commands

    async def dispatch_command(
        self, request: DispatchInput, invocation: InvocationInfo
    ) -> DispatchOutcome:
        return await self._dispatch(request, invocation.function in self._never_opt_outs)

    async def _dispatch(self, request: DispatchInput, allow_never: bool) -> DispatchOutcome:
        command = wire_command(request.command)
        link = self._link()
        canonical = canonical_command(command)
        try:
            judgement = await self._judge.judge(link, canonical, tool="command.dispatch")
        except ToolFailure as exc:
            raise OperationRefused("link_down", exc.message) from exc
        refuse_never_listed(judgement, allow_never=allow_never)
        target: PlayerRef | None = None
        if request.executor == "player":
            assert request.player is not None  # DispatchInput guarantees it
            target = await self._online(link, request.player)
            wire = CommandDispatch(executor="player", player=target.uuid, command=command)
        else:
            wire = CommandDispatch(executor="console", command=command)
        try:
            answer = await link.request(
                "command.dispatch", wire, timeout=self._settings.dispatch_timeout_s
            )
        except LinkRequestError as exc:
            if exc.code is LinkCode.TIMEOUT:
                raise OperationRefused(
                    "timeout",
                    "the server did not answer: the command may or may not have been dispatched",
                ) from exc
            raise _refusal(exc, "command.dispatch") from exc
        if not isinstance(answer, CommandDispatchResult):
            raise OperationRefused("server_error", "the server answered with the wrong type")
        dispatched = answer.dispatch_status == "dispatched"
        return DispatchOutcome(
            dispatch_status="dispatched" if dispatched else "not_dispatched",
            # Dispatching says nothing about what the command did; not dispatching means it
            # did not run at all.
            execution_result="unknown" if dispatched else "failure",
            feedback=list(answer.feedback or []) if target is None else [],
            executor=request.executor,
            player=target.name if target is not None else None,
        )

    # ---- approvals

    async def request_approval(
        self, request: ApprovalInput, invocation: InvocationInfo
    ) -> ApprovalAnswer:
        return await self._ask(request, invocation)

    async def _ask(self, request: ApprovalInput, invocation: InvocationInfo) -> ApprovalAnswer:
        link = self._link(APPROVALS)
        target = await self._online(link, request.player)
        interaction = request.interaction
        subject = Subject(
            "interaction",
            invocation.invocation_id,
            json.dumps(interaction.model_dump(mode="json"), sort_keys=True),
        )
        prompt = Text(
            template=_PROMPT, values={"title": interaction.title, "message": interaction.message}
        )
        try:
            outcome = await self._broker.request(
                link,
                target=target,
                subject=subject,
                prompt=prompt,
                buttons=self._buttons(request),
                timeout_s=request.timeout_ms / 1000,
                display={"requester": invocation.player, "target": target.name},
            )
        except ApprovalError as exc:
            raise OperationRefused("approval_unavailable", str(exc)) from exc
        if outcome.status == "offline":
            raise OperationRefused("player_offline", f"{target.name} left before answering")
        if outcome.status == "not_shown":
            raise OperationRefused("not_shown", f"the prompt could not be shown to {target.name}")
        if outcome.status == "approved" and not outcome.approves(subject):
            raise OperationRefused("server_error", "an approval for another prompt arrived")
        choice = outcome.option if outcome.status == "approved" else None
        if outcome.status == "approved" and interaction.type == "confirm":
            choice = interaction.options[0].id if interaction.options else None
        return ApprovalAnswer(approval_status=outcome.status, choice=choice, player=target.name)

    def _buttons(self, request: ApprovalInput) -> list[ApprovalButton]:
        interaction = request.interaction
        messages = self._messages()
        deny = ApprovalButton(
            label=Text(template=messages.deny_button), hover=None, answer="deny", option=None
        )
        if interaction.type == "confirm":
            if not interaction.options:
                accept = Text(template=messages.accept_button)
                return [
                    ApprovalButton(label=accept, hover=None, answer="approve", option=None),
                    deny,
                ]
            yes, no = interaction.options
            return [
                ApprovalButton(label=_label(yes.label), hover=None, answer="approve", option=None),
                ApprovalButton(label=_label(no.label), hover=None, answer="deny", option=None),
            ]
        buttons = [
            ApprovalButton(
                label=_label(option.label), hover=None, answer="approve", option=option.id
            )
            for option in interaction.options
        ]
        # The link carries at most 8 buttons; a select with 8 options is declined by timing out.
        return buttons + [deny] if len(buttons) < 8 else buttons

    # ---- the link

    def _link(self, feature: str | None = None) -> Link:
        try:
            return self._plugin.link(feature)
        except ToolFailure as exc:
            raise OperationRefused("link_down", exc.message) from exc

    async def _online(self, link: Link, player: str) -> PlayerRef:
        try:
            answer = await link.request("players.list", PlayersList())
        except LinkRequestError as exc:
            raise _refusal(exc, "players.list") from exc
        if not isinstance(answer, PlayersListResult):
            raise OperationRefused("server_error", "the server answered with the wrong type")
        wanted = player.lower()  # UUIDs compare case-insensitively, names exactly
        for online in answer.players:
            if online.name == player or online.uuid == wanted:
                return online
        raise OperationRefused("player_offline", f"{player} is not online")


def _label(label: str) -> Text:
    # Owner text is inserted as a value, so it is never parsed as markup.
    return Text(template="<label>", values={"label": label})


def _refusal(exc: LinkRequestError, what: str) -> OperationRefused:
    if exc.code is LinkCode.PLAYER_OFFLINE:
        return OperationRefused("player_offline", f"{what}: the player is not online")
    if exc.code is LinkCode.TIMEOUT:
        return OperationRefused("timeout", f"{what}: the server did not answer in time")
    if exc.code in (LinkCode.DISCONNECTED, LinkCode.UNAVAILABLE, LinkCode.UNKNOWN_TYPE):
        return OperationRefused("link_down", f"{what}: the server cannot answer now")
    log.warning("%s failed on the plugin: %s", what, exc)
    return OperationRefused("server_error", f"{what}: the server reported {exc.code}")
