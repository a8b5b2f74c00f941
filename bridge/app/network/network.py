"""Several servers on one bridge: a context of its own per server id, one store for all.

The link authenticates each plugin by the server id of its ``hello`` and hands its frames to
that server's handler (``bridge.link.handler.ServerTable``). Each server gets its own
``Runtime`` and ``AppHandler``: its own public session, listen switch, gates and cooldowns,
turn activity, link, plugin access and approval prompts, so one server's running or stuck
turn never makes another's chat wait, and a verdict on one server never waits for another's
connect, disconnect or turn. What is one per bridge is shared: the control plane store (a
``/mineclaw reload`` from any server publishes one new plane for all, read in a worker thread
so no server's verdicts wait for it), the archive, the audit log and the session records
(each server's sessions are kept under its own key, so a restart gives each its own).

A server's context is built the first time its plugin links (a ``servers.yml`` with fifty
servers costs nothing until they link) and kept for the process: a reconnect finds its
session and listen switch where they were.

Players move between servers behind a proxy (quit on one, join on another, in either order
over two connections). When a player joins a server, prompts still waiting for their answer
on every other server are closed as if they had left (the turn that asked learns the player
is gone) and the move is written to the audit log.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import httpx

from bridge.app.chat.handler import AppHandler
from bridge.app.network.cut_turns import CutTurns
from bridge.app.network.kept_usage import flush_kept_usage
from bridge.app.wiring.runtime import Runtime, RuntimeSettings
from bridge.control import ControlPlane
from bridge.errors import MineclawError, StoreError
from bridge.link.handler import Link
from bridge.link.messages import (
    ChatRequest,
    ChatVerdict,
    CommandReply,
    CommandRequest,
    Hello,
    LinkState,
    PlayerRef,
)
from bridge.link.protocol import DEFAULT_SERVER_ID
from bridge.link.server import Revoked
from bridge.store.archive import Fence
from bridge.store.player_state import PlayerState
from bridge.tools.plugin_access import PluginAccess

log = logging.getLogger(__name__)

_DEFAULT_SETTINGS = RuntimeSettings()

REVOKED_ASKER_REASON = "the owner revoked this server's link"
"""What the asker of a turn stopped by its server's revocation is told (when it links again)."""


class RevocableLinks(Protocol):
    """What revocation needs of the link server (`bridge.link.server.LinkServer`)."""

    on_revoked: Callable[[Revoked], None] | None

    def revoke_stale(self) -> list[Revoked]: ...


def server_plane(plane: ControlPlane, *, server_id: str) -> ControlPlane:
    """What server ``server_id`` serves of ``plane``: the network-wide files, with each policy
    file the server has of its own (``servers.yml``) in place of its network-wide counterpart."""
    policy = plane.server_policies.get(server_id)
    if policy is None:
        return plane
    own: dict[str, Any] = {}
    if policy.whitelist is not None:
        own["whitelist_file"] = policy.whitelist  # the served configuration compiles it
    if policy.tools is not None:
        own["tools"] = policy.tools
    if policy.functions is not None:
        own["functions"] = policy.functions
    if policy.messages is not None:
        own["messages"] = policy.messages
    return dataclasses.replace(plane, **own)


class ServerContext:
    """One server of the network: its id, its runtime and its application handler."""

    def __init__(self, server_id: str, runtime: Runtime, app: AppHandler) -> None:
        self.server_id = server_id
        self.runtime = runtime
        self.app = app
        self.players: set[str] = set()
        """UUIDs of the players this server reported online (chat, commands, joins)."""


class _ServerHandler:
    """The ``LinkHandler`` of one server: its ``AppHandler``, plus what the network tracks."""

    def __init__(self, network: Network, context: ServerContext) -> None:
        self._network = network
        self._context = context
        self._app = context.app

    def link_state(self) -> LinkState:
        return self._app.link_state()

    async def on_connected(self, link: Link, hello: Hello) -> None:
        await self._app.on_connected(link, hello)
        self._network.cut_turns.tell(self._context.server_id, self._app)
        self._network.flush_kept_usage()

    async def on_disconnected(self) -> None:
        await self._app.on_disconnected()

    async def on_chat(self, request: ChatRequest) -> ChatVerdict:
        self._network.seen(self._context, request.player)
        return await self._app.on_chat(request)

    async def on_command(self, request: CommandRequest) -> CommandReply:
        if request.sender.player is not None:
            self._network.seen(self._context, request.sender.player)
        version = self._context.runtime.plane.version
        reply = await self._app.on_command(request)
        if self._context.runtime.plane.version != version:
            # A reload from this server published a plane for every server: the others' wake
            # prefix and forwarding may have changed too.
            self._network.plane_changed(self._context)
        return reply

    async def on_player_join(self, player: PlayerRef) -> None:
        self._network.seen(self._context, player)
        await self._app.on_player_join(player)

    async def on_player_quit(self, player: PlayerRef) -> None:
        self._context.players.discard(player.uuid)
        await self._app.on_player_quit(player)

    async def on_chat_expired(self, request_id: str) -> None:
        await self._app.on_chat_expired(request_id)


class Network:
    """The servers one bridge serves: the link's ``ServerTable``.

        ``default``: the runtime of the default server (``link.token``), opened by the caller; every
        other server's runtime shares its store, archive and audit log. ``default_token``: the
    token of ``link.token``, or where to read it at each handshake
    (`bridge.link.token_rotation`: a rotated file is in force at once). ``serves``: whether this
    bridge serves a server now (a lease held
    by this bridge; every server when ``None``).
    """

    def __init__(
        self,
        default: Runtime,
        *,
        default_token: str | Callable[[], str],
        serves: Callable[[str], bool] | None = None,
        settings: RuntimeSettings = _DEFAULT_SETTINGS,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._default_runtime = default
        self._default_token: Callable[[], str] = (
            (lambda: default_token) if isinstance(default_token, str) else default_token
        )
        self._serves = serves
        self._settings = settings
        self._transport = transport
        self._contexts: dict[str, ServerContext] = {}
        self._handlers: dict[str, _ServerHandler] = {}
        self._pending: set[asyncio.Task[None]] = set()
        self._fence_for: Callable[[str], Fence] | None = None
        self.cut_turns = CutTurns(self._players)
        """The askers of turns cut when this bridge stopped serving their server."""
        self._after_reload: Callable[[], object] = lambda: None
        self.context(DEFAULT_SERVER_ID)

    @classmethod
    def open(
        cls,
        config_dir: Path,
        *,
        default_token: str | Callable[[], str],
        environ: Mapping[str, str] | None = None,
        manage_logging: bool = False,
        transport: httpx.AsyncBaseTransport | None = None,
        serves: Callable[[str], bool] | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> Network:
        """Open the default server's runtime (``Runtime.open``) and the network around it;
        ``clock`` is the budgets' wall clock. Raises ``ConfigError`` or ``StoreError``."""
        runtime = Runtime.open(
            config_dir,
            environ=environ,
            manage_logging=manage_logging,
            transport=transport,
            clock=clock,
        )
        return cls(runtime, default_token=default_token, serves=serves, transport=transport)

    @property
    def default(self) -> ServerContext:
        return self._contexts[DEFAULT_SERVER_ID]

    @property
    def contexts(self) -> Mapping[str, ServerContext]:
        """The servers that have linked at least once (and the default one)."""
        return self._contexts

    # ---- ServerTable

    def token(self, server_id: str) -> str | None:
        if server_id == DEFAULT_SERVER_ID:
            return self._default_token()
        # Read at every handshake and every frame: a reload that adds a server lets it link at
        # once, and one that changes or removes its token revokes its link (`revoked`). The
        # network's published plane, not the default server's view of it, which another
        # server's reload reaches only when the default server has adopted it.
        return self._default_runtime.store.current.servers.token(server_id)

    def handler(self, server_id: str) -> _ServerHandler:
        handler = self._handlers.get(server_id)
        if handler is None:
            handler = self._handlers[server_id] = _ServerHandler(self, self.context(server_id))
        return handler

    def serves(self, server_id: str) -> bool:
        return self._serves is None or self._serves(server_id)

    def watch_revocations(self, links: RevocableLinks) -> None:
        """Revocation as ``serve`` wires it: right after every reload the links whose token is
        no longer their server's are closed (``links.revoke_stale``: a changed token in
        ``.env``, a server gone from ``servers.yml``), and each revoked server stops
        (`revoked`)."""
        links.on_revoked = self.revoked
        self._after_reload = links.revoke_stale

    def revoked(self, link: Revoked) -> None:
        """``link`` was closed because its token was revoked: audited (``link.revoked``), and
        its server's waiting turns are dropped and its running ones stopped (their askers told
        when it links again): a turn a leaked token's plugin started must not go on calling
        tools that need no link (MCP servers, the web, memory) after the owner revoked it."""
        fields = {"peer": link.peer, "code": int(link.code), "reason": link.reason}
        self._stop_revoked(link.server_id, fields)

    def rotated(self) -> None:
        """``link.token`` was rotated and the default server's link closed
        (`bridge.link.token_rotation.watch_token`): its turns stop as a revoked server's do."""
        self._stop_revoked(DEFAULT_SERVER_ID, {"reason": "link.token rotated"})

    def _stop_revoked(self, server_id: str, fields: dict[str, Any]) -> None:
        recorded: dict[str, Any] = {"server": server_id, **fields}
        context = self._contexts.get(server_id)
        if context is not None:
            # The cut empties the wait line too, each asker owed a line like a stopped turn's.
            recorded["waiting_dropped"] = len(context.runtime.lanes.queue.waiting())
            recorded["turns_stopped"] = self.cut_turns.cut(
                server_id, context.runtime, REVOKED_ASKER_REASON, resend=False
            )
        try:
            self._default_runtime.audit.record("link.revoked", recorded)
        except MineclawError as exc:  # the audit must not keep a revoked server's turns
            log.error("link.revoked of %s not audited: %s", server_id, exc)

    def fence_archives(self, fence_for: Callable[[str], Fence]) -> None:
        """From now on each server's turns are archived only past ``fence_for(server_id)``
        (the lease's epoch: `bridge.app.network.server_leases`)."""
        self._fence_for = fence_for
        for server_id, context in self._contexts.items():
            context.runtime.archive_fence = fence_for(server_id)

    def serve_only(self, serves: Callable[[str], bool]) -> None:
        """From now on serve only the servers ``serves`` accepts (the leases this bridge
        holds)."""
        self._serves = serves

    # ---- contexts

    def context(self, server_id: str) -> ServerContext:
        """The server's context, built on first use."""
        context = self._contexts.get(server_id)
        if context is not None:
            return context
        if server_id == DEFAULT_SERVER_ID:
            runtime = self._default_runtime
        else:
            shared = self._default_runtime
            runtime = Runtime(
                store=shared.store,
                archive=shared.archive,
                audit=shared.audit,
                settings=self._settings,
                transport=self._transport,
                view=functools.partial(server_plane, server_id=server_id),
                records=shared.records,
                session_scope=server_id,
                metrics=shared.metrics,
                # One ledger for the bridge: a player's budget follows them between servers.
                usage=shared.usage,
                # One memory store: a player's memories follow them between servers.
                memories=shared.memories,
                clock=shared.clock,
                web_network=shared.web_network,
                reviews=shared.reviews,
                mcp=shared.mcp,
            )
            runtime.environ = shared.environ
            runtime.manage_logging = shared.manage_logging
            runtime.started_with = shared.started_with
            runtime.prepare()
        # One opt-out set for every server: a player is one person across the network.
        optouts = None if server_id == DEFAULT_SERVER_ID else self.default.app.optouts
        personas = None if server_id == DEFAULT_SERVER_ID else self.default.app.personas
        conversations = None if server_id == DEFAULT_SERVER_ID else self.default.app.conversations
        app = AppHandler(runtime, optouts=optouts, personas=personas, conversations=conversations)
        app.link_tools.plugin_of_player = self._plugin_of_player
        if self._fence_for is not None:
            runtime.archive_fence = self._fence_for(server_id)
        context = self._contexts[server_id] = ServerContext(server_id, runtime, app)
        if server_id != DEFAULT_SERVER_ID:
            log.info("server %s: context created", server_id)
        return context

    def _plugin_of_player(self, player_uuid: str) -> PluginAccess | None:
        context = self.server_of(player_uuid)
        return None if context is None else context.app.link_tools.plugin

    def server_of(self, player_uuid: str) -> ServerContext | None:
        """The server the player was last seen on, if any is known to hold them now."""
        for context in self._contexts.values():
            if player_uuid in context.players:
                return context
        return None

    # ---- what the servers' handlers report

    def seen(self, context: ServerContext, player: PlayerRef) -> None:
        """``player`` is on ``context``'s server now; they left every other server."""
        if player.uuid in context.players:
            return
        context.players.add(player.uuid)
        # A private lane kept here from an earlier visit (it was busy when they left) may miss
        # what they asked elsewhere since: let it go too, the archive has it all.
        context.runtime.lanes.lanes.forget_private(player.uuid)
        for other in self._contexts.values():
            if other is context:
                continue
            was_there = player.uuid in other.players
            other.players.discard(player.uuid)
            # The quit on the old server may come after this join (two connections): close
            # the prompts waiting for this player there now, whichever arrives first.
            closed = other.app.link_tools.broker.player_quit(player.uuid)
            # Their private conversation goes with them: the lane left behind is let go (when
            # idle), so the server they come back to restores it with what was said elsewhere.
            other.runtime.lanes.lanes.forget_private(player.uuid)
            if was_there or closed:
                context.runtime.audit.record(
                    "player.moved",
                    {
                        "player": player.name,
                        "from": other.server_id,
                        "to": context.server_id,
                        "prompts_closed": closed,
                    },
                )
                if closed:
                    log.info(
                        "%s moved from %s to %s: %d pending prompt(s) there closed",
                        *(player.name, other.server_id, context.server_id, closed),
                    )

    def plane_changed(self, source: ServerContext) -> None:
        """A reload from ``source`` published a new plane: every other server serves it too,
        and each linked one gets its link state (the prefix may have changed)."""
        plane = source.runtime.store.current  # the network's, not the source's own view
        # First: a server whose token the reload revoked is served nothing more.
        self._after_reload()
        for context in self._contexts.values():
            if context is not source:
                task = asyncio.get_running_loop().create_task(self._adopt(context, plane))
                self._pending.add(task)
                task.add_done_callback(self._pending.discard)

    async def adoptions_done(self) -> None:
        """Wait until every server has adopted the planes published so far (each adopts in
        its own task, off the reloading server's path)."""
        while self._pending:
            await asyncio.gather(*self._pending)

    @staticmethod
    async def _adopt(context: ServerContext, plane: ControlPlane) -> None:
        try:
            # Building a served configuration compiles the whitelist: not on the loop, where
            # the servers' verdicts are answered.
            await asyncio.to_thread(context.runtime.adopt, plane)
        except MineclawError as exc:  # built once already by the reloading server
            log.error(
                "server %s keeps version %s: %s",
                context.server_id,
                context.runtime.plane.version,
                exc,
            )
            return
        if context.runtime.link is not None:
            await context.app.send_link_state()

    def cut(self, server_id: str, reason: str) -> int:
        """This bridge stopped serving ``server_id`` (its database or lease lost): stop its
        running turns, their askers told ``reason`` when it links here again
        (``bridge.app.network.cut_turns``); how many were stopped."""
        context = self._contexts.get(server_id)
        return 0 if context is None else self.cut_turns.cut(server_id, context.runtime, reason)

    async def retire(self, server_id: str) -> None:
        """This bridge no longer serves ``server_id`` (another bridge took its lease): its
        context goes, so serving it again later starts from the store (its session restored
        from the archive, with the turns the other bridge completed), never from what this
        bridge remembered. The default server's context stays (it holds the shared stores)."""
        if server_id == DEFAULT_SERVER_ID:
            return
        context = self._contexts.pop(server_id, None)
        self._handlers.pop(server_id, None)
        if context is None:
            return
        context.runtime.engine.stop()
        await context.runtime.aclose(close_stores=False)
        log.info("server %s: context retired", server_id)

    def _players(self) -> PlayerState | None:
        """The per-player store (None while it cannot be opened: lines wait in memory)."""
        try:
            return self._default_runtime.players
        except StoreError as exc:
            log.info("the player state cannot be opened: %s", exc)
            return None

    def flush_kept_usage(self) -> None:
        """Write the usage the ledger refused earlier, in the background (a server linked)."""
        task = asyncio.get_running_loop().create_task(self._flush_kept_usage())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _flush_kept_usage(self) -> None:
        await flush_kept_usage(c.runtime for c in list(self._contexts.values()))

    async def aclose(self) -> None:
        """Close every server's runtime (each stops its turns, which commit first); the shared
        archive and audit log close last, with the default server's. Lines owed to the askers
        of cut turns are written to the store first, for the next bridge to deliver."""
        await self.cut_turns.aclose()
        await flush_kept_usage(c.runtime for c in self._contexts.values())
        others = [c for c in self._contexts.values() if c.server_id != DEFAULT_SERVER_ID]
        await asyncio.gather(*(c.runtime.aclose(close_stores=False) for c in others))
        await self._default_runtime.aclose()
