"""The link-backed tools of one ``serve`` process, ready to plug into the app.

One object holds what outlives a turn: the connected plugin (``PluginAccess``), the approval
broker and the ``/mineclaw approve|deny`` answers. Its handlers read the control plane in force
when a call runs (the whitelist, ``message.yml``'s approval lines, ``identity.name``,
``environment`` limits), so they can be bound once, as the runtime's extra tool handlers::

    link_tools = LinkTools(served=lambda: runtime.served, audit=runtime.audit)
    Runtime(..., extra_tool_handlers=link_tools.handlers())
    router.approval_handler = link_tools.approval_handler
    # from the LinkHandler: link_tools.connected(link, hello) / .disconnected() / .player_quit(p)
    # per turn: offered(turn_tools, link_tools.plugin.features, linked=...)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from bridge.control.plane import ControlPlane
from bridge.link.handler import Link
from bridge.link.messages import CommandRequest, Hello, PlayerRef, Text
from bridge.policy.approval_commands import ApprovalCommands
from bridge.policy.approvals import CONFIRMATION_TIMEOUT_S, ApprovalBroker
from bridge.policy.whitelist import Whitelist, compile_whitelist
from bridge.store.audit_sink import AuditSink
from bridge.tools.ask_player import AskPlayer
from bridge.tools.assembly import redactor_for
from bridge.tools.game_facts import GameFactsTools
from bridge.tools.plugin_access import PluginAccess
from bridge.tools.registry import CallContext, HandlerFn
from bridge.tools.run_command import RunCommand, RunCommandSettings
from bridge.tools.server_knowledge import ServerKnowledgeTools
from bridge.tools.snapshots import SnapshotLimits, SnapshotTools


class InForce(Protocol):
    """The configuration in force: a plane and its compiled whitelist, read as one (the app's
    served configuration), so a reload between two reads cannot pair a plane with another
    version's whitelist."""

    @property
    def plane(self) -> ControlPlane: ...

    @property
    def whitelist(self) -> Whitelist: ...


@dataclass(frozen=True, slots=True)
class PlaneWhitelist:
    """A plane with its whitelist compiled, for a caller without a served configuration."""

    plane: ControlPlane
    whitelist: Whitelist

    @classmethod
    def of(cls, plane: ControlPlane) -> PlaneWhitelist:
        return cls(plane, compile_whitelist(plane.whitelist_file))


class LinkTools:
    def __init__(
        self,
        *,
        served: Callable[[], InForce],
        audit: AuditSink,
        broker: ApprovalBroker | None = None,
        confirmation_timeout_s: float = CONFIRMATION_TIMEOUT_S,
    ) -> None:
        """``served``: the configuration in force at call time. ``confirmation_timeout_s``:
        how long a player may take to confirm (60 s)."""
        self._served = served
        plane = self._plane
        self._confirmation_timeout_s = confirmation_timeout_s
        self._audit = audit
        self.plugin = PluginAccess()
        self.plugin_of_player: Callable[[str], PluginAccess | None] | None = None
        """In a network (``bridge.app.network.network``): the plugin of the server a player is on
        now, which the snapshot tools read, so a player who moved mid-turn is looked at where they
        are; ``None`` (or a player on no known server): this server's plugin."""
        self.broker = broker or ApprovalBroker()
        self.approvals = ApprovalCommands(
            self.broker,
            messages=lambda: plane().messages.approval,
            audit=audit,
            redact=lambda text: plane().redact(text),
            ask_messages=lambda: plane().messages.ask,
        )
        self.ask = AskPlayer(
            self.plugin,
            self.broker,
            messages=lambda: plane().messages.ask,
            assistant=lambda: plane().config.identity.name,
            redactor=lambda: plane().redactor,
            audit=audit,
            timeout_s=lambda: plane().config.environment.ask_timeout_ms / 1000,
        )
        self._run_command: tuple[int, RunCommand] | None = None

    def _plane(self) -> ControlPlane:
        return self._served().plane

    def handlers(self) -> dict[str, HandlerFn]:
        return {
            "player_snapshot": self._snapshots("player_snapshot"),
            "item_inspect": self._snapshots("item_inspect"),
            "block_inspect": self._snapshots("block_inspect"),
            "online_players": self._snapshots("online_players"),
            "run_command": self.run_command,
            "ask_player": self.ask.run,
            **self._game_facts(),
            **self._server_knowledge(),
        }

    async def run_command(self, arguments: dict[str, Any], context: CallContext) -> Any:
        return await self._run_command_for(self._served()).run(arguments, context)

    async def approval_handler(self, request: CommandRequest) -> list[Text]:
        """For the app's ``approve``/``deny`` hook."""
        return list(self.approvals.handle(request).lines)

    # ---- link events

    def connected(self, link: Link, hello: Hello) -> None:
        self.plugin.connected(link, hello)

    def disconnected(self) -> None:
        self.plugin.disconnected()
        self.broker.link_lost()

    def player_quit(self, player: PlayerRef) -> None:
        self.broker.player_quit(player.uuid)

    # ----

    def _snapshots(self, name: str) -> HandlerFn:
        async def handler(arguments: dict[str, Any], context: CallContext) -> Any:
            limits = SnapshotLimits.from_config(self._plane().config.environment)
            where = self.plugin_of_player
            plugin = (None if where is None else where(context.player_uuid)) or self.plugin
            tools = SnapshotTools(plugin, limits=limits)
            return await tools.handlers()[name](arguments, context)

        return handler

    def _game_facts(self) -> dict[str, HandlerFn]:
        def bound(name: str) -> HandlerFn:
            async def handler(arguments: dict[str, Any], context: CallContext) -> Any:
                # In a network, the facts of the server the player is on (its datapacks and
                # plugins); a player on no known server (the console) asks this one.
                where = self.plugin_of_player
                plugin = (None if where is None else where(context.player_uuid)) or self.plugin
                return await GameFactsTools(plugin).handlers()[name](arguments, context)

            return handler

        return {name: bound(name) for name in ("recipe_lookup", "item_facts")}

    def _server_knowledge(self) -> dict[str, HandlerFn]:
        def bound(name: str) -> HandlerFn:
            async def handler(arguments: dict[str, Any], context: CallContext) -> Any:
                # The plugins and commands of the server the player is on (as for game facts),
                # marked with the whitelist in force when the call runs.
                where = self.plugin_of_player
                plugin = (None if where is None else where(context.player_uuid)) or self.plugin
                tools = ServerKnowledgeTools(plugin, self._served().whitelist)
                return await tools.handlers()[name](arguments, context)

            return handler

        return {name: bound(name) for name in ("list_plugins", "list_commands")}

    def _run_command_for(self, served: InForce) -> RunCommand:
        plane = served.plane
        cached = self._run_command
        if cached is not None and cached[0] == plane.version:
            return cached[1]
        tool = RunCommand(
            self.plugin,
            self.broker,
            whitelist=served.whitelist,
            messages=plane.messages.approval,
            audit=self._audit,
            redactor=redactor_for(plane),
            settings=RunCommandSettings(
                assistant_name=plane.config.identity.name,
                confirmation_timeout_s=self._confirmation_timeout_s,
            ),
        )
        self._run_command = (plane.version, tool)
        return tool
