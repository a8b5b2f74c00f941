"""``/mineclaw`` subcommands. Each has its permission node, checked here from the Granted facts
the plugin sent (the plugin checks them too); every reply line comes from ``message.yml``.

``approve`` and ``deny`` are routed to ``CommandRouter.approval_handler``, which the app
handler sets to the link tools' approval commands (``bridge.policy.approval_commands``); a
router built without one (tests) answers them with ``commands.not_available``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass

from bridge.app.commands.history import HISTORY_NODE, HistoryPath
from bridge.app.commands.listen_why import listen_why_lines
from bridge.app.commands.memory import USAGE as MEMORY_USAGE
from bridge.app.commands.memory import memory_command
from bridge.app.commands.private import PrivatePath, turn_ended
from bridge.app.commands.retry import RetryPath
from bridge.app.commands.usage import usage_lines
from bridge.app.lanes.output import LinkTurnOutput
from bridge.app.players.listen_optouts import ListenOptOuts
from bridge.app.serving.served import NotConfiguredError
from bridge.app.wiring.runtime import Runtime
from bridge.control import ConfigLoadError
from bridge.errors import ConfigError, MineclawError, StoreError, TurnError
from bridge.functions.review import review_catalogue, review_lines, skill_texts
from bridge.functions.worker_confinement import BRIDGE_LAYERS, describe
from bridge.link.messages import CommandReply, CommandRequest, Text
from bridge.turns.compaction import CompactionOutcome
from bridge.turns.gates import PRIVATE_PERMISSION
from bridge.turns.ports import PUBLIC_LANE

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
    help_key: str | None = None
    """The ``help.*`` line that describes it (None: ``help`` leaves it out)."""
    open_choices: frozenset[str] = frozenset()
    """First arguments every sender may use without the node."""
    self_checked: bool = False
    """The subcommand checks who may use it itself (``help`` still lists it by ``permission``)."""


LISTEN_SELF = frozenset({"ignore-me", "include-me"})
"""``/mineclaw listen`` choices every player may use for themselves, without the node."""


class CommandRouter:
    """``on_state_changed`` is awaited after anything that changes what ``link.state`` says."""

    def __init__(
        self,
        runtime: Runtime,
        output: LinkTurnOutput,
        *,
        on_state_changed: StateChanged,
        optouts: ListenOptOuts | None = None,
    ) -> None:
        self._runtime = runtime
        self._output = output
        self._on_state_changed = on_state_changed
        self._optouts = optouts
        self.approval_handler: ApprovalHandler | None = None
        self._private = PrivatePath(runtime)
        self._retry = RetryPath(runtime)
        # Each pending compaction's askers (player UUIDs): a shared run reports to all of them.
        self._compaction_askers: dict[asyncio.Future[CompactionOutcome], set[str]] = {}
        self._reports: set[asyncio.Future[None]] = set()
        node = "mineclaw.command."
        self._subcommands: dict[str, _Subcommand] = {
            "status": _Subcommand(None, "status", self._status, "help.status"),
            "help": _Subcommand(None, "help", self._help, "help.help"),
            "listen": _Subcommand(
                node + "listen",
                "listen on|off|status|why",
                self._listen,
                "help.listen",
                # Opting out of listen mode (or back in) is every player's own choice.
                open_choices=LISTEN_SELF,
            ),
            "reload": _Subcommand(node + "reload", "reload", self._reload, "help.reload"),
            "model": _Subcommand(
                node + "model", "model [list|default|provider/model]", self._model, "help.model"
            ),
            # stop and clear check their node themselves: each acts on a lane, and one's own
            # private lane, or the public turn one asked, needs no owner's node.
            "stop": _Subcommand(
                node + "stop", "stop [private]", self._stop, "help.stop", self_checked=True
            ),
            "clear": _Subcommand(
                node + "clear", "clear [private]", self._clear, "help.clear", self_checked=True
            ),
            "ai": _Subcommand(
                PRIVATE_PERMISSION,
                "ai <question> | ai clear | ai stop | ai history [id] | ai persona [name]"
                " | ai new [title] | ai list | ai switch|rename|delete <id>",
                self._ai,
                "help.ai",
            ),
            "compact": _Subcommand(node + "compact", "compact", self._compact, "help.compact"),
            "tools": _Subcommand(node + "tools", "tools validate", self._tools, "help.tools"),
            "functions": _Subcommand(
                node + "functions", "functions validate", self._functions, "help.functions"
            ),
            "approve": _Subcommand(
                node + "approve", "approve|deny <id>", self._approval, "help.approve"
            ),
            "usage": _Subcommand(None, "usage [player]", self._usage_report, "help.usage"),
            "history": _Subcommand(HISTORY_NODE, "history", self._history, "help.history"),
            # Each player's own failed question: the lane's permission is checked with it.
            "retry": _Subcommand(None, "retry", self._retry_last, "help.retry"),
            "deny": _Subcommand(node + "approve", "deny <id>", self._approval),
            # Every player's own memories; another player's need mineclaw.memory.others
            # (checked by the subcommand).
            "memory": _Subcommand(None, MEMORY_USAGE, self._memory, "help.memory"),
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
        if not self._may_use(subcommand, request.args[1:], sender.granted):
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

    @staticmethod
    def _may_use(subcommand: _Subcommand, args: Sequence[str], granted: Collection[str]) -> bool:
        if subcommand.permission is None or subcommand.self_checked:
            return True
        if subcommand.permission in granted:
            return True
        # Opting out of listen mode (or back in) is every player's own choice.
        return (
            subcommand.run.__name__ == "_listen" and bool(args) and args[0].lower() in LISTEN_SELF
        )

    def _line(self, line: str) -> Text:
        return self._runtime.text("commands.line", {"line": line})

    def _usage(self, name: str) -> list[Text]:
        return [self._runtime.text("commands.usage", {"usage": self._subcommands[name].usage})]

    # ---- the subcommands

    async def _history(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        if args:
            return self._usage("history")
        return await HistoryPath(self._runtime).public(request.sender.player)

    async def _retry_last(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        if args:
            return self._usage("retry")
        return await self._retry.retry(request)

    async def _listen(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        choice = args[0].lower() if args else "status"
        if choice not in {"on", "off", "status", "why", *LISTEN_SELF} or len(args) > 1:
            return self._usage("listen")
        if choice in LISTEN_SELF:
            return await self._listen_self(request, choice == "ignore-me")
        if choice == "why":
            return [self._line(line) for line in listen_why_lines(runtime)]
        if choice != "status":
            try:
                changed = runtime.listen.set(choice == "on")
            except TurnError as exc:
                return [runtime.text("errors.invalid_request", {"reason": str(exc)})]
            if changed and choice == "off":
                runtime.listen_decisions.listen_off()
            if changed:
                await self._on_state_changed()
                announcement = "listen.enabled" if choice == "on" else "listen.disabled"
                try:
                    await self._output.broadcast(runtime.text(announcement))
                except MineclawError as exc:
                    log.warning("listen announcement not delivered: %s", exc)
        state = "on" if runtime.listen.on else "off"
        return [runtime.text("commands.listen_status", {"state": state})]

    async def _listen_self(self, request: CommandRequest, ignore: bool) -> list[Text]:
        """``listen ignore-me`` / ``include-me``: the sending player's own choice, remembered."""
        runtime = self._runtime
        player = request.sender.player
        if player is None:
            return [runtime.text("commands.usage", {"usage": "listen on|off|status"})]
        listen = runtime.listen
        changed = listen.ignore(player.uuid, player.name) if ignore else listen.include(player.uuid)
        if ignore:
            runtime.listen_decisions.forget(player.uuid)
        if changed and self._optouts is not None:
            try:
                await asyncio.to_thread(self._optouts.save)
            except StoreError as exc:
                # Kept for this run; the owner learns why it will not outlive a restart.
                log.error("listen opt-out of %s not remembered: %s", player.name, exc)
        if changed:
            runtime.audit.record(
                "listen.opt_out" if ignore else "listen.opt_in", {"player": player.name}
            )
        key = "listen.ignored" if ignore else "listen.included"
        return [runtime.text(key, {"player": player.name})]

    async def _help(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        """What the sender may use, by the permission facts the plugin sent."""
        runtime = self._runtime
        granted = request.sender.granted
        values = {"player": request.sender.player.name if request.sender.player else "console"}
        lines = [runtime.text("commands.help_header", values)]
        for subcommand in self._subcommands.values():
            key = subcommand.help_key
            # Listed by its node: stop and clear check more themselves (one's own lane or
            # turn), but are an owner's commands for the public lane.
            listed = subcommand.permission is None or subcommand.permission in granted
            if key is not None and listed:
                lines.append(runtime.text(key, {**values, "usage": subcommand.usage}))
        if request.sender.player is not None:
            usage = "listen ignore-me|include-me"
            lines.append(runtime.text("help.ignore_me", {**values, "usage": usage}))
        return lines

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

    @staticmethod
    def _own_lane(args: Sequence[str]) -> bool | None:
        """For ``clear``/``stop``: True for ``<name> private`` (the sender's own lane), False
        for the public lane, None for other arguments."""
        words = [arg.lower() for arg in args]
        if words == ["private"]:
            return True
        return False if not words else None

    async def _ai(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        return await self._private.ask(request, args)

    def _refused(self, request: CommandRequest, name: str, node: str) -> list[Text] | None:
        if node in request.sender.granted:
            return None
        player = request.sender.player
        values = {"player": player.name if player else "console", "command": name}
        return [self._runtime.text("commands.no_permission", values)]

    async def _clear(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        own = self._own_lane(args)
        if own is None:
            return self._usage("clear")
        sender = request.sender.player
        if own:
            refused = self._refused(request, "clear private", PRIVATE_PERMISSION)
            if refused is not None or sender is None:
                return refused or [runtime.text("private.players_only")]
            return self._private.clear(sender)
        refused = self._refused(request, "clear", "mineclaw.command.clear")
        if refused is not None:
            return refused
        session_id = runtime.session.clear()
        runtime.listen.overheard.clear()  # a new session starts without what was overheard
        runtime.audit.record("session.clear", {"session_id": session_id, "lane": PUBLIC_LANE})
        return [runtime.text("commands.clear_done")]

    async def _stop(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        own = self._own_lane(args)
        if own is None:
            return self._usage("stop")
        sender = request.sender.player
        if own:
            if sender is None:
                return [runtime.text("private.players_only")]
            return await self._private.stop(sender)
        asker = runtime.engine.asker
        # The player who asked the running public turn may stop it; anyone else needs the node.
        if sender is None or asker is None or sender.uuid != asker.uuid:
            refused = self._refused(request, "stop", "mineclaw.command.stop")
            if refused is not None:
                return refused
        task = runtime.turn
        if not runtime.engine.stop():
            return [runtime.text("commands.stop_none")]
        await turn_ended(task)
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
        if args[0].lower() == "list":
            current = runtime.model_ref()
            return [
                runtime.text(
                    "commands.model_entry_current" if ref == current else "commands.model_entry",
                    {"model": ref},
                )
                for ref in runtime.plane.providers.models
            ]
        if args[0].lower() == "default":
            runtime.model_override = None
            default = runtime.plane.providers.default
            runtime.audit.record("model.switch", {"model": default, "default": True})
            return [runtime.text("commands.model_default", {"model": default})]
        try:
            runtime.plane.providers.resolve(args[0])
        except ConfigError as exc:
            return [runtime.text("commands.model_refused", {"reason": str(exc)})]
        runtime.model_override = args[0]
        runtime.audit.record("model.switch", {"model": args[0]})
        return [runtime.text("commands.model_switched", {"model": args[0]})]

    async def _status(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        text = runtime.text
        link = runtime.link
        model = {"model": runtime.model_ref()}
        try:
            runtime.snapshot(None)
            model_line = text("status.model", model)
        except NotConfiguredError as exc:
            model_line = text("status.model_unavailable", {**model, "reason": str(exc)})
        state = runtime.session.state
        tokens = runtime.session.estimated_tokens(runtime.plane.config.context.max_messages)
        session = {
            "turns": str(len(state.turns)),
            "messages": str(state.message_count),
            "tokens": str(tokens),
        }
        activity = {"activity": runtime.lanes.status(), "version": str(runtime.plane.version)}
        web_tools = runtime.served.web_tools
        web_line = (
            text("status.web_on", {"tools": ", ".join(web_tools)})
            if web_tools
            else text("status.web_off")
        )
        # One line per MCP server: its state, its tools and, when it cannot take calls, why.
        review = runtime.plane.config.mcp.require_review
        mcp_lines = [
            self._line(f"MCP server {line}") for line in runtime.mcp.status(require_review=review)
        ]
        return [
            text("status.link_up" if link is not None and link.connected else "status.link_down"),
            model_line,
            text("status.listen_on" if runtime.listen.on else "status.listen_off"),
            web_line,
            text("status.session_summarised" if state.summary else "status.session", session),
            text("status.activity", activity),
            text("status.sandbox", {"layers": sandbox_layers(runtime.functions.pool.confinement)}),
            *mcp_lines,
            text("status.memory", {"state": memory_state(runtime)}),
            text(
                "status.audit",
                {
                    "dropped": str(runtime.audit.dropped_events),
                    "lost": str(runtime.audit.lost_events),
                },
            ),
        ]

    async def _usage_report(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        if len(args) > 1:
            return self._usage("usage")
        budgets = runtime.budgets
        if budgets is None:
            return [runtime.text("commands.not_available", {"what": "Usage"})]
        sender = request.sender
        lines = await asyncio.to_thread(
            usage_lines,
            budgets,
            runtime.plane.config.budgets,
            asker_uuid=sender.player.uuid if sender.player else None,
            asker_name=sender.player.name if sender.player else "console",
            granted=frozenset(sender.granted),
            target=args[0] if args else None,
            ledger=runtime.usage,
        )
        return [runtime.text("budgets.usage_line", {"line": line}) for line in lines]

    async def _memory(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        if runtime.memories is None:
            return [runtime.text("commands.not_available", {"what": "Memory"})]
        lines = await memory_command(runtime.memories, request, args, runtime.text)
        return self._usage("memory") if lines is None else lines

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


def memory_state(runtime: Runtime) -> str:
    """``/mineclaw status``'s memory words: off, keywords only, or the vectors' progress."""
    if runtime.memories is None or not runtime.plane.config.memory.enabled:
        return "off"
    embedder = runtime.memory_embedder
    return "keywords only" if embedder is None else embedder.status()


def sandbox_layers(workers: dict[str, str] | None) -> str:
    """The Function sandbox's OS layers for `/mineclaw status`: the workers' (once the pool has
    started) and the bridge's own."""
    bridge = describe(BRIDGE_LAYERS) or "not_dumpable unavailable: not set (not serving)"
    if workers is None:
        return f"workers not started yet (they start with the first call); {bridge}"
    return f"{describe(workers)}; {bridge}"
