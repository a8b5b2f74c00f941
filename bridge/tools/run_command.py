"""``run_command``: the model's hands, with the server owner's rules and the target's consent.

Arguments: ``command``, ``intent`` (shown to whoever confirms), ``player`` (``""`` for the
console, otherwise the exact name or UUID of an online player) and ``approver`` (optional;
``""`` or the name of the player who gives a console command's second confirmation). The
decision, in code:

- the asking player's own command runs if its canonical form fully matches a ``player`` rule of
  ``whitelist.yml``;
- a console command runs if it fully matches a ``console`` rule;
- a command for any other online player runs only after that player clicks *accept* on a
  prompt (``ApprovalBroker``); the approval is bound to that player, to them as the executor
  and to the exact canonical command, which is also what is dispatched. One turn may ask each
  player at most once.

On every path, before any prompt and again right before the dispatch, the command and every
command it carries are judged against the never list with the server's resolution of their
labels (``CommandJudge``): an unknown label, a carrier the bridge cannot read, or a never-listed
command (by spelling, real name, alias, owning plugin or permission node) is refused. Only a
rule written with ``allow_never: true`` lets a never-listed command through, and nothing lets
an unknown label or an unreadable carrier through.

- a console command matching a ``console_confirm`` rule (the two-person rule) runs only after
  a second player confirms it: the ``approver`` the model names (the requester says who), who
  must be online, must not be the requester, and must hold ``mineclaw.approve.console`` when
  they accept (the plugin's facts of their answer). The approval is bound to the requester
  and the exact canonical command, single use and limited in time; the dispatch's audit
  record names the requester and the approver.

Anything else is not dispatched. The result says which of these happened (``refused``,
``denied``, ``timed_out``, ``target_offline``, ``dispatched``); ``dispatched`` carries the
server's ``dispatch_status``, the console's captured feedback, and ``execution_result:
"unknown"`` because dispatching a command says nothing about what it did. Each decision is
audited.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from bridge.control.messages_file import ApprovalMessages
from bridge.link.codes import ErrorCode as LinkCode
from bridge.link.errors import LinkRequestError
from bridge.link.handler import Link
from bridge.link.messages import (
    CommandDispatch,
    CommandDispatchResult,
    PlayerRef,
    PlayersList,
    PlayersListResult,
)
from bridge.policy.approvals import (
    CONFIRMATION_TIMEOUT_S,
    ApprovalBroker,
    ApprovalError,
    Subject,
    confirmation_prompt,
)
from bridge.policy.invisible import describe, first_invisible
from bridge.policy.whitelist import InvalidCommand, Whitelist, canonicalize
from bridge.redaction import Redactor
from bridge.store.audit_sink import AuditSink, JSONValue
from bridge.tools.command_judge import CommandJudge
from bridge.tools.plugin_access import APPROVALS, PluginAccess, link_failure
from bridge.tools.registry import CallContext, HandlerFn
from bridge.tools.results import ErrorCode, ToolFailure

ARGUMENTS = frozenset({"command", "intent", "player", "approver"})
APPROVE_CONSOLE = "mineclaw.approve.console"
"""The node a player needs to give a console command its second confirmation."""
MAX_INTENT_CHARS = 512
SECRET_IN_PROMPT = (
    "the command holds what looks like a secret, and asking another player "
    "to confirm it would show it to them"
)

Status = Literal["refused", "denied", "timed_out", "target_offline", "dispatched"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCommandSettings:
    """``assistant_name`` fills ``<name>`` in the prompt (``identity.name``, default Mineclaw);
    ``confirmation_timeout_s`` is how long a target may take to answer (60 s)."""

    assistant_name: str = "Mineclaw"
    confirmation_timeout_s: float = CONFIRMATION_TIMEOUT_S


@dataclass(frozen=True, slots=True)
class _Target:
    ref: PlayerRef
    own: bool


class RunCommand:
    """The handler, bound to one control-plane version (its whitelist and prompt lines)."""

    def __init__(
        self,
        plugin: PluginAccess,
        broker: ApprovalBroker,
        *,
        whitelist: Whitelist,
        messages: ApprovalMessages,
        audit: AuditSink,
        redactor: Redactor | None = None,
        settings: RunCommandSettings | None = None,
    ) -> None:
        self._plugin = plugin
        self._broker = broker
        self._whitelist = whitelist
        self._messages = messages
        self._audit = audit
        self._redactor = redactor
        self._settings = settings or RunCommandSettings()
        self._judge = CommandJudge(plugin, whitelist.never)

    def handlers(self) -> dict[str, HandlerFn]:
        return {"run_command": self.run}

    async def run(self, arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
        command, intent, player, approver = _arguments(arguments)
        link = self._plugin.link()
        if player == "":
            return await self._console(link, command, intent, approver, context)
        target = await self._resolve(link, player, context)
        if target is None:
            return self._result(context, "target_offline", {"player": player}, command=command)
        if target.own:
            return await self._own(link, target.ref, command, context)
        return await self._confirmed(link, target.ref, command, intent, context)

    async def _console(
        self, link: Link, command: str, intent: str, approver: str, context: CallContext
    ) -> dict[str, Any]:
        try:
            decision = self._whitelist.decide("console", command)
        except InvalidCommand as exc:
            return self._refused(context, command, f"the command {exc.reason}")
        confirm_rule = self._whitelist.confirm_rule(decision.canonical)
        if confirm_rule is not None:  # before the console rules: the two-person rule wins
            return await self._second_person(
                link, decision.canonical, intent, approver, confirm_rule, context
            )
        if not decision.allowed:
            why = "no console rule of the server's whitelist allows this command"
            return self._refused(context, decision.canonical, why)
        return await self._dispatch(
            link,
            None,
            decision.canonical,
            context,
            rule=decision.rule,
            allow_never=decision.allow_never,
        )

    async def _own(
        self, link: Link, player: PlayerRef, command: str, context: CallContext
    ) -> dict[str, Any]:
        try:
            decision = self._whitelist.decide("player", command)
        except InvalidCommand as exc:
            return self._refused(context, command, f"the command {exc.reason}")
        if not decision.allowed:
            why = "no player rule of the server's whitelist allows this command"
            return self._refused(context, decision.canonical, why)
        return await self._dispatch(
            link,
            player,
            decision.canonical,
            context,
            rule=decision.rule,
            allow_never=decision.allow_never,
        )

    async def _confirmed(
        self, link: Link, target: PlayerRef, command: str, intent: str, context: CallContext
    ) -> dict[str, Any]:
        try:
            canonical = canonicalize(command)
        except InvalidCommand as exc:
            return self._refused(context, command, f"the command {exc.reason}")
        refusal = await self._never_refusal(link, canonical, allow_never=False)
        if refusal is not None:
            return self._refused(context, canonical, refusal)
        if not self._plugin.has(APPROVALS):
            why = "the server's plugin cannot ask players to confirm"
            return self._refused(context, canonical, why)
        if self._holds_secret(canonical):
            return self._refused(context, canonical, SECRET_IN_PROMPT)
        intent = self._redact(intent)
        subject = Subject("command", target.uuid, canonical)
        prompt, buttons, display = confirmation_prompt(
            self._messages,
            requester=context.player_name,
            target=target.name,
            command=canonical,
            intent=intent,
            assistant=self._settings.assistant_name,
        )
        try:
            outcome = await self._broker.request(
                link,
                target=target,
                subject=subject,
                prompt=prompt,
                buttons=buttons,
                timeout_s=self._settings.confirmation_timeout_s,
                display=display,
                turn=context.turn_id,
            )
        except ApprovalError as exc:
            return self._refused(context, canonical, str(exc))
        if outcome.approves(subject):
            return await self._dispatch(link, target, canonical, context, confirmed=True)
        return self._unconfirmed(context, canonical, outcome.status, "player", target.name)

    async def _second_person(
        self,
        link: Link,
        canonical: str,
        intent: str,
        approver: str,
        rule: str,
        context: CallContext,
    ) -> dict[str, Any]:
        """The two-person rule: ``canonical`` runs as the console only once ``approver``, a
        player other than the requester holding ``mineclaw.approve.console``, accepts it."""
        if not approver:
            why = (
                "this console command needs a second player's confirmation (the server's"
                " two-person rule): ask who should confirm it, then call again with their name"
                " as approver"
            )
            return self._refused(context, canonical, why)
        if not self._plugin.has(APPROVALS):
            return self._refused(context, canonical, "the server's plugin cannot ask players")
        allow_never = self._whitelist.confirm_opts_out(rule)
        refusal = await self._never_refusal(link, canonical, allow_never=allow_never)
        if refusal is not None:
            return self._refused(context, canonical, refusal)
        if self._holds_secret(canonical):
            return self._refused(context, canonical, SECRET_IN_PROMPT)
        intent = self._redact(intent)
        target = await self._resolve(link, approver, context)
        if target is None:
            return self._result(
                context, "target_offline", {"approver": approver}, command=canonical
            )
        if target.own:
            why = "the requester cannot give the second confirmation of their own command"
            return self._refused(context, canonical, why)
        subject = Subject("console", context.player_uuid, canonical)
        prompt, buttons, display = confirmation_prompt(
            self._messages,
            requester=context.player_name,
            target=target.ref.name,
            command=canonical,
            intent=intent,
            assistant=self._settings.assistant_name,
            console=True,
        )
        try:
            outcome = await self._broker.request(
                link,
                target=target.ref,
                subject=subject,
                prompt=prompt,
                buttons=buttons,
                timeout_s=self._settings.confirmation_timeout_s,
                display=display,
                turn=context.turn_id,
                permission=APPROVE_CONSOLE,
            )
        except ApprovalError as exc:
            return self._refused(context, canonical, str(exc))
        if outcome.approves(subject):
            audit: dict[str, JSONValue] = {"approver": target.ref.name}
            return await self._dispatch(
                link,
                None,
                canonical,
                context,
                rule=rule,
                confirmed=True,
                audit=audit,
                allow_never=allow_never,
            )
        if outcome.status == "not_permitted":
            why = f"{target.ref.name} does not hold {APPROVE_CONSOLE}, so cannot confirm it"
            return self._refused(context, canonical, why)
        return self._unconfirmed(context, canonical, outcome.status, "approver", target.ref.name)

    async def _never_refusal(self, link: Link, canonical: str, *, allow_never: bool) -> str | None:
        """Why the never list refuses ``canonical`` (with all it carries), or None."""
        judgement = await self._judge.judge(link, canonical, tool="run_command")
        return judgement.refusal(allow_never=allow_never)

    def _holds_secret(self, canonical: str) -> bool:
        """A prompt shows the command to another player, who must see all of what they confirm:
        a command holding a secret is refused rather than shown or half-hidden."""
        return self._redactor is not None and self._redactor.redact_text(canonical) != canonical

    def _redact(self, text: str) -> str:
        return text if self._redactor is None else self._redactor.redact_text(text)

    def _unconfirmed(
        self, context: CallContext, canonical: str, status: str, role: str, name: str
    ) -> dict[str, Any]:
        """The result of a confirmation that did not approve: ``role`` names who was asked."""
        who = {role: name}
        if status == "denied":
            return self._result(context, "denied", who, command=canonical)
        if status == "timeout":
            return self._result(context, "timed_out", who, command=canonical)
        if status == "offline":
            return self._result(context, "target_offline", who, command=canonical)
        if status == "cancelled":
            raise ToolFailure(ErrorCode.UNAVAILABLE, "the server link dropped during the prompt")
        return self._refused(context, canonical, f"{name} could not be asked to confirm")

    async def _resolve(self, link: Link, player: str, context: CallContext) -> _Target | None:
        try:
            answer = await link.request("players.list", PlayersList())
        except LinkRequestError as exc:
            raise link_failure(exc, "run_command") from exc
        assert isinstance(answer, PlayersListResult)
        wanted = player.lower()
        for online in answer.players:
            if online.name == player or online.uuid == wanted:
                return _Target(online, own=online.uuid == context.player_uuid)
        return None

    async def _dispatch(
        self,
        link: Link,
        player: PlayerRef | None,
        canonical: str,
        context: CallContext,
        *,
        rule: str | None = None,
        confirmed: bool = False,
        audit: dict[str, JSONValue] | None = None,
        allow_never: bool = False,
    ) -> dict[str, Any]:
        # Judged here, right before the dispatch, whatever was judged before a prompt: the
        # server's command map may have changed while a player read it.
        refusal = await self._never_refusal(link, canonical, allow_never=allow_never)
        if refusal is not None:
            return self._refused(context, canonical, refusal)
        if player is None:
            request = CommandDispatch(executor="console", command=canonical)
        else:
            request = CommandDispatch(executor="player", player=player.uuid, command=canonical)
        who: dict[str, Any] = {"executor": request.executor}
        if player is not None:
            who["player"] = player.name
        try:
            answer = await link.request("command.dispatch", request)
        except LinkRequestError as exc:
            if exc.code is LinkCode.PLAYER_OFFLINE and player is not None:
                return self._result(context, "target_offline", who, command=canonical)
            self._record(context, "dispatch_failed", canonical, {**who, "link_code": exc.code})
            if exc.code is LinkCode.TIMEOUT:
                raise ToolFailure(
                    ErrorCode.TIMEOUT,
                    "the server did not answer: the command may or may not have been dispatched",
                ) from exc
            raise link_failure(exc, "run_command") from exc
        assert isinstance(answer, CommandDispatchResult)
        ran = answer.dispatch_status == "dispatched"
        fields: dict[str, Any] = {
            **who,
            "dispatch_status": answer.dispatch_status,
            "execution_result": "unknown" if ran else "not_run",
        }
        if player is None:
            fields["feedback"] = list(answer.feedback or [])
        audit_extra: dict[str, JSONValue] = {"rule": rule, "confirmed": confirmed, **(audit or {})}
        return self._result(context, "dispatched", fields, command=canonical, audit=audit_extra)

    def _refused(self, context: CallContext, command: str, reason: str) -> dict[str, Any]:
        return self._result(context, "refused", {"reason": reason}, command=command)

    def _result(
        self,
        context: CallContext,
        status: Status,
        fields: dict[str, Any],
        *,
        command: str,
        audit: dict[str, JSONValue] | None = None,
    ) -> dict[str, Any]:
        self._record(context, status, command, {**fields, **(audit or {})})
        return {"status": status, "command": command, **fields}

    def _record(
        self, context: CallContext, status: str, command: str, fields: dict[str, Any]
    ) -> None:
        # The audit log stores what it is given, so the command is redacted here.
        shown = self._redactor.redact_text(command) if self._redactor else command
        record: dict[str, JSONValue] = {
            "turn_id": context.turn_id,
            "call_id": context.call_id,
            "requester": context.player_name,
            "status": status,
            "command": shown,
        }
        for key in (
            "executor",
            "player",
            "approver",
            "dispatch_status",
            "rule",
            "confirmed",
            "reason",
        ):
            if key in fields:
                record[key] = fields[key]
        if "link_code" in fields:
            record["link_code"] = str(fields["link_code"])
        self._audit.record("run_command.decision", record)


def _arguments(arguments: dict[str, Any]) -> tuple[str, str, str, str]:
    extra = sorted(set(arguments) - ARGUMENTS)
    if extra:
        raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, f"unknown argument {extra[0]!r}")
    command = arguments.get("command")
    intent = arguments.get("intent", "")
    player = arguments.get("player", "")
    if not isinstance(command, str) or not command:
        raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, "command must be a non-empty string")
    if not isinstance(intent, str) or len(intent) > MAX_INTENT_CHARS:
        raise ToolFailure(
            ErrorCode.INVALID_ARGUMENTS,
            f"intent must be one line of at most {MAX_INTENT_CHARS} printable characters",
        )
    hidden = first_invisible(intent) or next((c for c in intent if not c.isprintable()), None)
    if hidden is not None:
        raise ToolFailure(
            ErrorCode.INVALID_ARGUMENTS,
            f"intent contains the invisible or control character {describe(hidden)};"
            " write it on one line in plain words",
        )
    if not isinstance(player, str):
        raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, "player must be a string")
    approver = arguments.get("approver", "")
    if not isinstance(approver, str):
        raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, "approver must be a string")
    return command, intent, player, approver
