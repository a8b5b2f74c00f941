"""``/mineclaw`` subcommands. Each has its permission node, checked here from the Granted facts
the plugin sent (the plugin checks them too); every reply line comes from ``message.yml``.

``approve`` and ``deny`` are routed to ``CommandRouter.approval_handler``, which the app
handler sets to the link tools' approval commands (``bridge.policy.approval_commands``); a
router built without one (tests) answers them with ``commands.not_available``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from bridge.app.output import LinkTurnOutput
from bridge.app.runtime import Runtime
from bridge.app.served import NotConfiguredError
from bridge.control import ConfigLoadError
from bridge.errors import ConfigError, MineclawError, TurnError
from bridge.functions.review import review_catalogue, review_lines, skill_texts
from bridge.link.messages import CommandReply, CommandRequest, Text
from bridge.turns.compaction import CompactionOutcome

log = logging.getLogger(__name__)

MAX_LINES = 64
"""The protocol's bound on one command reply."""
MAX_REASON_PROBLEMS = 3

ApprovalHandler = Callable[[CommandRequest], Awaitable[list[Text]]]
"""``approve``/``deny`` with their arguments; returns the reply lines."""
StateChanged = Callable[[], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class _Subcommand:
    permission: str | None
    usage: str
    run: Callable[[CommandRequest, Sequence[str]], Awaitable[list[Text]]]


class CommandRouter:
    """``on_state_changed`` is awaited after anything that changes what ``link.state`` says."""

    def __init__(
        self, runtime: Runtime, output: LinkTurnOutput, *, on_state_changed: StateChanged
    ) -> None:
        self._runtime = runtime
        self._output = output
        self._on_state_changed = on_state_changed
        self.approval_handler: ApprovalHandler | None = None
        # Each pending compaction's askers (player UUIDs): a shared run reports to all of them.
        self._compaction_askers: dict[asyncio.Future[CompactionOutcome], set[str]] = {}
        self._reports: set[asyncio.Future[None]] = set()
        node = "mineclaw.command."
        self._subcommands: dict[str, _Subcommand] = {
            "listen": _Subcommand(node + "listen", "listen on|off|status", self._listen),
            "reload": _Subcommand(node + "reload", "reload", self._reload),
            "compact": _Subcommand(node + "compact", "compact", self._compact),
            "clear": _Subcommand(node + "clear", "clear", self._clear),
            "stop": _Subcommand(node + "stop", "stop", self._stop),
            "model": _Subcommand(node + "model", "model [provider/model]", self._model),
            "status": _Subcommand(None, "status", self._status),
            "tools": _Subcommand(node + "tools", "tools validate", self._tools),
            "functions": _Subcommand(node + "functions", "functions validate", self._functions),
            "approve": _Subcommand(node + "approve", "approve <id>", self._approval),
            "deny": _Subcommand(node + "approve", "deny <id>", self._approval),
        }

    async def on_command(self, request: CommandRequest) -> CommandReply:
        runtime = self._runtime
        sender = request.sender
        name = request.args[0].lower() if request.args else ""
        subcommand = self._subcommands.get(name)
        values = {"player": sender.player.name if sender.player else "console"}
        if subcommand is None:
            usage = " | ".join(sorted(self._subcommands))
            return CommandReply(lines=[runtime.text("commands.usage", {**values, "usage": usage})])
        if subcommand.permission is not None and subcommand.permission not in sender.granted:
            line = runtime.text("commands.no_permission", {**values, "command": name})
            return CommandReply(lines=[line])
        try:
            lines = await subcommand.run(request, request.args[1:])
        except MineclawError as exc:
            log.warning("/mineclaw %s failed: %s", name, exc)
            lines = [runtime.text("errors.invalid_request", {**values, "reason": str(exc)})]
        if len(lines) > MAX_LINES:
            lines = lines[: MAX_LINES - 1] + [self._line(f"... {len(lines) - MAX_LINES + 1} more")]
        return CommandReply(lines=lines)

    # ---- helpers

    def _line(self, line: str) -> Text:
        return self._runtime.text("commands.line", {"line": line})

    def _usage(self, name: str) -> list[Text]:
        return [self._runtime.text("commands.usage", {"usage": self._subcommands[name].usage})]

    # ---- the subcommands

    async def _listen(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        choice = args[0].lower() if args else "status"
        if choice not in {"on", "off", "status"} or len(args) > 1:
            return self._usage("listen")
        if choice != "status":
            try:
                changed = runtime.listen.set(choice == "on")
            except TurnError as exc:
                return [runtime.text("errors.invalid_request", {"reason": str(exc)})]
            if changed:
                await self._on_state_changed()
                announcement = "listen.enabled" if choice == "on" else "listen.disabled"
                try:
                    await self._output.broadcast(runtime.text(announcement))
                except MineclawError as exc:
                    log.warning("listen announcement not delivered: %s", exc)
        state = "on" if runtime.listen.on else "off"
        return [runtime.text("commands.listen_status", {"state": state})]

    async def _reload(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        try:
            plane = await asyncio.to_thread(runtime.reload)
        except ConfigLoadError as exc:
            shown = [str(p) for p in exc.problems if not p.warning][:MAX_REASON_PROBLEMS]
            reason = "; ".join(shown) or str(exc)
            return [runtime.text("commands.reload_failed", {"reason": reason})]
        except ConfigError as exc:
            return [runtime.text("commands.reload_failed", {"reason": str(exc)})]
        runtime.audit.record("control.reload", {"version": plane.version})
        runtime.prepare()
        lines = [runtime.text("commands.reload_done", {"version": str(plane.version)})]
        lines += [self._line(note) for note in runtime.restart_pending]
        await self._on_state_changed()
        return lines

    async def _compact(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        try:
            snapshot = runtime.snapshot(None)
        except NotConfiguredError as exc:
            return [runtime.text("commands.model_refused", {"reason": str(exc)})]
        queued = runtime.engine.active
        future = runtime.compactor.request(snapshot)
        asker = request.sender.player
        if asker is not None:
            askers = self._compaction_askers.get(future)
            if askers is None:
                askers = self._compaction_askers[future] = set()
                future.add_done_callback(self._report_compaction)
            askers.add(asker.uuid)
        return [runtime.text("commands.compact_queued" if queued else "commands.compact_started")]

    def _report_compaction(self, done: asyncio.Future[CompactionOutcome]) -> None:
        askers = self._compaction_askers.pop(done, set())
        outcome = "failed" if done.cancelled() else done.result()
        line = self._runtime.text("commands.compact_result", {"outcome": outcome.replace("_", " ")})
        for uuid in sorted(askers):
            self._spawn_tell(uuid, line)

    async def _clear(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        session_id = runtime.session.clear()
        runtime.audit.record("session.clear", {"session_id": session_id})
        return [runtime.text("commands.clear_done")]

    async def _stop(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        if not runtime.engine.stop():
            return [runtime.text("commands.stop_none")]
        asker = runtime.turn_player
        sender = request.sender.player
        if asker is not None and (sender is None or sender.uuid != asker.uuid):
            notice = runtime.text("chat.turn_stopped", {"player": asker.name})
            self._spawn_tell(asker.uuid, notice)
        return [runtime.text("commands.stop_done")]

    def _spawn_tell(self, uuid: str, line: Text) -> None:
        async def tell() -> None:
            try:
                await self._output.tell(uuid, line)
            except MineclawError as exc:
                log.info("notice not delivered: %s", exc)

        task = asyncio.ensure_future(tell())
        self._reports.add(task)
        task.add_done_callback(self._reports.discard)

    async def _model(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        if len(args) > 1:
            return self._usage("model")
        if not args:
            return [runtime.text("commands.model_current", {"model": runtime.model_ref()})]
        try:
            runtime.plane.providers.resolve(args[0])
        except ConfigError as exc:
            return [runtime.text("commands.model_refused", {"reason": str(exc)})]
        runtime.model_override = args[0]
        runtime.audit.record("model.switch", {"model": args[0]})
        return [runtime.text("commands.model_switched", {"model": args[0]})]

    async def _status(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        link = runtime.link
        model = runtime.model_ref()
        try:
            runtime.snapshot(None)
        except NotConfiguredError as exc:
            model += f" (not available yet: {exc})"
        state = runtime.session.state
        tokens = runtime.session.estimated_tokens(runtime.plane.config.context.max_messages)
        activity = runtime.activity.current or "idle"
        lines = [
            f"link: {'up' if link is not None and link.connected else 'down'}",
            f"model: {model}",
            f"listen: {'on' if runtime.listen.on else 'off'}",
            f"session: {len(state.turns)} turns, {state.message_count} messages, "
            f"about {tokens} tokens{', summarised' if state.summary else ''}",
            f"activity: {activity}, configuration version {runtime.plane.version}",
        ]
        return [self._line(line) for line in lines]

    async def _tools(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        if list(args) != ["validate"]:
            return self._usage("tools")
        registry = self._runtime.served.registry
        lines = []
        for entry in registry.catalogue:
            problems = "".join(f"; {problem.message}" for problem in entry.problems)
            lines.append(f"{entry.name} [{entry.status}]{problems}")
        return [self._line(line) for line in lines or ["no tools configured"]]

    async def _functions(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        if list(args) != ["validate"]:
            return self._usage("functions")
        served = self._runtime.served
        plane, registry = served.plane, served.registry
        review = review_catalogue(
            plane.functions,
            plane.config.functions,
            skills=skill_texts(plane.skills),
            known_tools=frozenset(entry.name for entry in registry.catalogue),
        )
        return [self._line(line) for line in review_lines(review)]

    async def _approval(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        if self.approval_handler is None:
            return [self._runtime.text("commands.not_available", {"what": "Approvals"})]
        return await self.approval_handler(request)
