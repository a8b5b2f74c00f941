"""``/mineclaw`` subcommands: the table (usage, permission node, help line) and the dispatch.
Each has its permission node, checked here from the Granted facts the plugin sent (the plugin
checks them too); every reply line comes from ``message.yml``. A group's work is in its own
module of this room (``listen``, ``lanes``, ``model``, ``status``, ``configuration``,
``usage``, ``memory``, ``history``, ``retry``, ``private`` for ``/ai``); ``help`` reads the
table, so it stays here.

``approve`` and ``deny`` are routed to ``CommandRouter.approval_handler``, which the app
handler sets to the link tools' approval commands (``bridge.policy.approval_commands``); a
router built without one (tests) answers them with ``commands.not_available``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass

from bridge.app.commands.configuration import (
    functions_command,
    reload_command,
    tools_command,
)
from bridge.app.commands.history import HISTORY_NODE, HistoryPath
from bridge.app.commands.lanes import LaneCommands
from bridge.app.commands.listen import LISTEN_SELF, ListenCommand
from bridge.app.commands.memory import USAGE as MEMORY_USAGE
from bridge.app.commands.memory import memory_command, player_uuid
from bridge.app.commands.model import model_command
from bridge.app.commands.private import PrivatePath
from bridge.app.commands.replies import Replies
from bridge.app.commands.retry import RetryPath
from bridge.app.commands.status import status_lines
from bridge.app.commands.usage import usage_command
from bridge.app.lanes.output import LinkTurnOutput
from bridge.app.players.listen_optouts import ListenOptOuts
from bridge.app.wiring.runtime import Runtime
from bridge.errors import MineclawError
from bridge.link.messages import CommandReply, CommandRequest, Text
from bridge.turns.gates import PRIVATE_PERMISSION
from bridge.turns.persona import PERSONA_NODE

log = logging.getLogger(__name__)

PERSONA_USAGE = " | ai persona [name]"
"""Left out of ``help`` for a sender without ``mineclaw.persona``."""

MAX_LINES = 64
"""The protocol's bound on one command reply."""

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
        self.approval_handler: ApprovalHandler | None = None
        self._replies = replies = Replies(runtime, lambda name: self._subcommands[name].usage)
        self._on_state_changed = on_state_changed
        self._private = private = PrivatePath(runtime)
        self._retry = RetryPath(runtime)
        self._listen_command = ListenCommand(
            runtime, output, replies, on_state_changed=on_state_changed, optouts=optouts
        )
        self._lanes = LaneCommands(runtime, output, replies, private)
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
                node + "stop", "stop [private]", self._lanes.stop, "help.stop", self_checked=True
            ),
            "clear": _Subcommand(
                node + "clear",
                "clear [private]",
                self._lanes.clear,
                "help.clear",
                self_checked=True,
            ),
            "ai": _Subcommand(
                PRIVATE_PERMISSION,
                "ai <question> | ai clear | ai stop | ai history [id]"
                + PERSONA_USAGE
                + " | ai new [title] | ai list | ai switch|rename|delete <id>",
                self._ai,
                "help.ai",
            ),
            "compact": _Subcommand(
                node + "compact", "compact", self._lanes.compact, "help.compact"
            ),
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
        return self._replies.line(line)

    # ---- the subcommands: each group's module does the work

    async def _history(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        if args:
            return self._replies.usage("history")
        return await HistoryPath(self._runtime).public(request.sender.player)

    async def _retry_last(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        if args:
            return self._replies.usage("retry")
        return await self._retry.retry(request)

    async def _listen(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        return await self._listen_command.run(request, args)

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
                usage = subcommand.usage
                if PERSONA_NODE not in granted:  # the list says "you may use"
                    usage = usage.replace(PERSONA_USAGE, "")
                lines.append(runtime.text(key, {**values, "usage": usage}))
        if request.sender.player is not None:
            usage = "listen ignore-me|include-me"
            lines.append(runtime.text("help.ignore_me", {**values, "usage": usage}))
        return lines

    async def _reload(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        return await reload_command(self._runtime, self._replies, self._on_state_changed)

    async def _ai(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        return await self._private.ask(request, args)

    async def _model(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        return model_command(self._runtime, args, self._replies)

    async def _status(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        return await status_lines(self._runtime, self._replies)

    async def _usage_report(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        return await usage_command(self._runtime, request, args, self._replies)

    async def _memory(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        if runtime.memories is None:
            return [runtime.text("commands.not_available", {"what": "Memory"})]
        lines = await memory_command(
            runtime.memories,
            request,
            args,
            runtime.text,
            resolve=lambda player: player_uuid(runtime.link, player),
            audit=lambda kind, fields: runtime.audit.record(kind, dict(fields)),
        )
        return self._replies.usage("memory") if lines is None else lines

    async def _tools(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        return tools_command(self._runtime, args, self._replies)

    async def _functions(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        return functions_command(self._runtime, args, self._replies)

    async def _approval(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        if self.approval_handler is None:
            return [self._runtime.text("commands.not_available", {"what": "Approvals"})]
        return await self.approval_handler(request)
