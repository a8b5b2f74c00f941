"""Everything one ``serve`` process owns, and the pair it serves: the control plane in force
and the served configuration built from it (``bridge.app.serving.served``).

A reload loads the folder, builds the candidate served configuration and publishes the two
together, or neither: one reference swap, so a reader sees the old pair or the new one whole.
A turn takes its snapshot from the served configuration in force when it starts and keeps it;
a reload or a model switch changes what the *next* snapshot holds.

Provider clients are reused across versions whose provider settings did not change (see
``bridge.app.serving.served``); a replaced client is closed once no turn can be using it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import os
from collections.abc import Callable, Collection, Mapping
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bridge.app.lanes.output import LinkTurnOutput
from bridge.app.lanes.turn_lanes import TurnLanes
from bridge.app.players.conversation_state import ConversationState
from bridge.app.players.persona_choices import PersonaChoices, soul_for
from bridge.app.players.state_import import import_files
from bridge.app.requests.conversation_titles import ConversationTitler
from bridge.app.requests.listen_decisions import ListenDecider
from bridge.app.requests.memory_embedding import MemoryEmbedder
from bridge.app.requests.server_budget import count_embedding
from bridge.app.serving.budget_binding import budget_gate
from bridge.app.serving.memory_binding import (
    WorkspaceNotes,
    indexed_archives,
    memory_tools_for,
)
from bridge.app.serving.restart_settings import restart_needed
from bridge.app.serving.served import (
    ModelStream,
    NotConfiguredError,
    PluginFeatures,
    ProcessParts,
    ServedConfig,
    build_served,
    retired_clients,
)
from bridge.app.wiring.expired_prompts import expire_open_prompts
from bridge.app.wiring.log_level import apply_log_level
from bridge.app.wiring.process_stores import open_stores
from bridge.control import ControlPlane, ControlPlaneStore
from bridge.control.providers import ModelPrice
from bridge.control.souls_files import Soul
from bridge.control.workspace_files import WORKSPACE_DIR
from bridge.errors import ConfigError, MineclawError
from bridge.functions.live_tool import LiveFunctions
from bridge.functions.review_state import ReviewBook
from bridge.link.handler import Link
from bridge.link.messages import Text
from bridge.mcp.clients import McpClients
from bridge.memory.store import MemoryStore
from bridge.metrics import BridgeMetrics
from bridge.policy.approvals import ApprovalBroker
from bridge.policy.budgets import BudgetRefusal, Budgets
from bridge.providers.client import ProviderClient
from bridge.providers.settings import ModelSettings
from bridge.store.archive import DATA_DIR_NAME, Fence, FencedArchive, TurnArchive
from bridge.store.audit import AuditLog
from bridge.store.player_state import PlayerState
from bridge.store.sessions import OpenPrompt, SessionRecords
from bridge.store.usage import UsageLedger
from bridge.tools.game_facts import version_line
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.plugin_access import PluginAccess
from bridge.tools.registry import CallContext, HandlerFn
from bridge.turns.engine import TurnOutcome
from bridge.turns.gates import ChatGates
from bridge.turns.lanes import Lane
from bridge.turns.listen import ListenMode
from bridge.turns.ports import PlayerRef, TurnOutput, TurnSnapshot
from bridge.turns.restore import SessionStore
from bridge.turns.session import PublicSession
from bridge.turns.tool_status import TOOLS
from bridge.turns.wake import WakeRules
from bridge.web.seam import TestNetwork

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeSettings:
    """action_bar_interval_s: the least time between two action-bar frames (0.075 s)."""

    action_bar_interval_s: float = 0.075


class Runtime:
    """Build with ``Runtime.open(config_dir, output=...)``; close with ``await aclose()``.

    ``extra_tool_handlers``: handlers for the tools other parts provide (snapshots,
    ``run_command``, ``call_function``), bound into every registry this runtime builds.
    ``transport``: handed to every provider client's httpx client (tests answer the model's
    requests in process with ``httpx.MockTransport`` where the wire is not what they test).
    ``manage_logging``: apply ``logging.level`` at open and again on every reload (``serve``;
    tests that share the process's loggers leave it off).

    Raises ``ConfigError`` when the first plane's served configuration cannot be built (a bad
    wake pattern names its key).
    """

    def __init__(
        self,
        *,
        store: ControlPlaneStore,
        archive: TurnArchive,
        audit: AuditLog,
        output: TurnOutput | None = None,
        settings: RuntimeSettings = RuntimeSettings(),
        extra_tool_handlers: Mapping[str, HandlerFn] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        view: Callable[[ControlPlane], ControlPlane] | None = None,
        records: SessionRecords | None = None,
        session_scope: str = "",
        metrics: BridgeMetrics | None = None,
        usage: UsageLedger | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        web_network: TestNetwork | None = None,
        reviews: ReviewBook | None = None,
        memories: MemoryStore | None = None,
        mcp: McpClients | None = None,
    ) -> None:
        self.store = store
        self.reviews = reviews or ReviewBook()
        """The reviewed Function sources (``functions.require_review``); shared by the
        servers of a network."""
        self.memories = memories
        """Players' and the server's memories (None: memory is off for this process)."""
        self.web_network = web_network
        """The end-to-end tests' network for the web tools (``bridge.web.seam``), or None."""
        # What this runtime serves of each published plane: all of it, or one server's view
        # of it in a network (its own policy files in place of the network-wide ones).
        self._view: Callable[[ControlPlane], ControlPlane] = view or (lambda plane: plane)
        self.archive = archive
        self.records = records
        self.session_scope = session_scope
        """This runtime's server in the store's keys ("" for the default server)."""
        self._players: PlayerState | None = None
        self.expired_prompts: list[OpenPrompt] = []
        """Command prompts the last run left open: their targets are told once the plugin
        links (`AppHandler.on_connected`)."""
        self.metrics = metrics or BridgeMetrics(
            prices=self._price_of, recording=store.current.config.metrics.enabled
        )
        """The process's metrics (one for every server of a network): recorded and served by
        the endpoint when ``metrics.enabled`` (only a restart applies that setting)."""
        """Session starts, compactions and open prompts, for the next restart (None: the
        sessions live in memory only). ``session_scope``: the key this runtime's lanes keep
        their sessions under (each server of a network has its own; "" for the default)."""
        self.audit = audit
        self.usage = usage
        """The usage ledger token budgets count in (None: usage is not counted)."""
        self.clock = clock
        """The budgets' wall clock (days and months begin by it)."""
        self.budgets = None if usage is None else Budgets(usage, clock=clock)
        # Every audit field is redacted whole with the plane in force when it is written.
        audit.redact_with(lambda fields: self.plane.redactor.redact_json(fields))
        self.settings = settings
        self.extra_tool_handlers = dict(extra_tool_handlers or {})
        self.link: Link | None = None
        self.plugin: PluginAccess | None = None
        """The connected plugin and its features (set by the app handler): a tool the plugin
        cannot serve is not shown to the model."""
        self.listen = ListenMode()
        self.persona_choices: PersonaChoices | None = None
        self.conversations: ConversationState | None = None
        """The players' private conversations (set by the app handler; shared in a network)."""
        """The players' own persona choices (set by the app handler; shared in a network)."""
        self.gates = ChatGates()
        self.model_override: str | None = None
        self.manage_logging = False
        self.started_with = store.current
        """The plane at start: the values of the settings only a restart applies."""
        self.restart_pending: list[str] = []
        """What the latest reload changed that only a restart applies (``restart_needed``)."""
        self.environ: Mapping[str, str] | None = None
        """Stands in for the process environment when the plane is loaded (tests)."""
        self.turn: asyncio.Task[TurnOutcome] | None = None
        """The latest turn's task (set by the chat path), for shutdown."""
        self.turn_player: PlayerRef | None = None
        """Who asked the latest public turn, for the notice when it is stopped."""
        self.turn_output: TurnOutput = output or LinkTurnOutput(self)
        # The public lane and the players' private lanes (/ai), the cap and the wait line.
        self.archive_fence: Fence | None = None
        """Checked in every turn's archive transaction: this bridge still holds the server's
        lease (`bridge.app.network.server_leases`); None without leases."""
        self.lanes = TurnLanes(
            self,
            archive=FencedArchive(archive, lambda: self.archive_fence),
            audit=audit,
            output=self.turn_output,
            action_bar_interval_s=settings.action_bar_interval_s,
            sessions=None if records is None else SessionStore(records, archive, session_scope),
            metrics=self.metrics,
            archive_for=None
            if memories is None
            else indexed_archives(memories, lambda: self.plane),
        )
        self.metrics.add_queue(lambda: len(self.lanes.queue.waiting()))
        # Titles of private conversations after their first answered turn.
        self.conversation_titles = ConversationTitler(self)
        self.lanes.on_private_turn = self.conversation_titles.after_turn
        self.metrics.add_audit(lambda: (audit.dropped_events, audit.lost_events))
        self.approval_broker = ApprovalBroker(ledger=records)
        """Every approval prompt of this runtime (run_command, Functions)."""
        # A turn others wait behind holds them at most one confirmation's timeout.
        self.approval_broker.window = self.lanes.confirmations
        public = self.lanes.public
        self.activity, self.session = public.activity, public.session
        self.engine, self.compactor = public.engine, public.compactor
        self.lanes.add_after_turn(self._close_retired_clients)
        # Which listen-mode lines start a turn (bridge.decisions); it needs to know when the
        # assistant last answered in public, for follow-ups.
        self.listen_decisions = ListenDecider(self)
        self.engine.add_after_turn(self._public_turn_ended)
        self._retired: list[ProviderClient] = []
        self._closing: set[asyncio.Task[None]] = set()
        self._warned_version: int | None = None
        # The cooldowns outlive versions; the setting is the served configuration's in force.
        cooldowns = Cooldowns(cooldown_ms=lambda: self.served.tool_cooldown_ms)
        self.memory_tools = (
            None if memories is None else memory_tools_for(memories, lambda: self.plane)
        )
        self.memory_embedder = (
            None
            if memories is None
            else MemoryEmbedder(
                memories,
                lambda: self.plane,
                transport=transport,
                count=functools.partial(count_embedding, self),
            )
        )
        """Memory vectors (``memory.embeddings``): the question's, and the catch-up."""
        if self.memory_tools is not None and self.memory_embedder is not None:
            self.memory_tools.vectors = self.memory_embedder
            self.memory_tools.written = self.memory_embedder.poke
            self.lanes.add_after_turn(lambda _: self.poke_embedder())
        """``remember`` and ``recall`` over the memories (bound while ``memory.enabled``)."""
        # The owner's MCP servers: one set of sessions for the process (the other servers of a
        # network share the default runtime's); their tools join every build's registry.
        self._owns_mcp = mcp is None
        self.mcp: McpClients = mcp or McpClients(
            audit=audit,
            redact=lambda text: self.plane.redact(text),
            reviewed=self.reviews.has,
            progress=self._mcp_progress,
        )
        self.mcp.add_listener(self._mcp_tools_changed)
        self._parts = ProcessParts(
            audit=audit,
            cooldowns=cooldowns,
            redact_now=lambda text: self.plane.redact(text),
            transport=transport,
            budgets=self.budgets,
            web_counted=self.metrics.web_request,
            web_network=web_network,
            reviews=self.reviews,
            memories=memories,
            memory_tools=self.memory_tools,
            mcp=self.mcp,
            memory_vectors=self.memory_embedder,
        )
        # call_function: one V8 engine for the process, started by the first call.
        self.functions = LiveFunctions(
            plane=lambda: self.plane,
            native_tools=self.function_tools,
            audit=audit,
            pool=lambda: self.served.function_pool,  # a reload that changes it: a new pool
            reviews=self.reviews,
        )
        self.extra_tool_handlers.update(self.functions.handlers())
        self._served = build_served(
            self._view(store.current), parts=self._parts, handlers=self.extra_tool_handlers
        )
        self._workspace_notes = None if memories is None else WorkspaceNotes(memories)
        self._sync_memory_notes()
        if records is not None:  # audited once the plane (and its redactor) is served
            self.expired_prompts.extend(expire_open_prompts(records, audit))

    @classmethod
    def open(
        cls,
        config_dir: Path,
        *,
        settings: RuntimeSettings = RuntimeSettings(),
        environ: Mapping[str, str] | None = None,
        manage_logging: bool = False,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> Runtime:
        """Load the control plane and open the archive, audit log and usage ledger where
        ``storage`` says (``<config>/data`` by default), migrating their schemas; ``clock`` is
        the budgets' wall clock.

        Raises ``ConfigError`` or ``StoreError``.
        """
        store = ControlPlaneStore(config_dir, environ=environ)
        web_network = TestNetwork.from_environ(os.environ if environ is None else environ)
        stores = open_stores(store.current, config_dir)
        try:
            runtime = cls(
                store=store,
                archive=stores.archive,
                audit=stores.audit,
                settings=settings,
                transport=transport,
                records=SessionRecords(stores.archive.database),
                usage=stores.usage,
                clock=clock,
                web_network=web_network,
                reviews=stores.reviews,
                memories=stores.memories,
            )
            runtime.environ = environ
            runtime.manage_logging = manage_logging
        except MineclawError:  # a bad wake pattern: nothing may stay open behind the error
            stores.close()
            raise
        if manage_logging:
            apply_log_level(runtime.plane)
        runtime.prepare()
        return runtime

    @property
    def served(self) -> ServedConfig:
        """The served configuration in force; take it once per unit of work and keep it."""
        return self._served

    @property
    def plane(self) -> ControlPlane:
        """The control plane in force: the served configuration's, so the two never differ."""
        return self._served.plane

    def model_stream(self, ref: str) -> ModelStream:
        """A one-off request stream of model ``ref`` from the served configuration in force
        (`RequestPort`: listen decisions, titles)."""
        return self._served.model_stream(ref)

    def one_off_route(self, ref: str) -> tuple[ProviderClient, ModelSettings]:
        """Model ``ref``'s client and settings in force (`RequestPort`: listen decisions)."""
        return self._served.one_off_route(ref)

    def reload(self) -> ControlPlane:
        """Load the folder again, build what it serves and publish both; on ``ConfigError``
        (a file's problems, a wake pattern that does not compile or would wake on every
        message, anything the build refuses) the old pair stays. Blocking (it reads files):
        run it in a worker thread."""
        built: list[ServedConfig] = []

        def build(candidate: ControlPlane) -> None:
            self.reviews.refresh()  # reviews made by the command line meanwhile
            built.append(self._build(self._view(candidate)))

        # One read of the folder, built and then published by the store; the runtime's pair
        # is swapped in one assignment.
        plane = self.store.reload(build)
        self._publish(built[0])
        if self.manage_logging:
            apply_log_level(plane)
        self.restart_pending = restart_needed(self.started_with, plane)
        for note in self.restart_pending:
            log.warning("%s", note)
        for warning in plane.warnings:  # serve prints the first plane's; these are the news
            log.warning("%s", warning)
        return plane

    def adopt(self, plane: ControlPlane) -> None:
        """Serve ``plane``, which another runtime sharing this store (another server of the
        network, ``bridge.app.network.network``) has loaded and published: build its served
        configuration here and swap the pair in. Blocking: run it in a worker thread."""
        if plane.version <= self.plane.version:
            return
        self._publish(self._build(self._view(plane)))
        self.restart_pending = restart_needed(self.started_with, plane)

    def republish(self) -> None:
        """Build the plane in force again and publish it: after a review in the console, so
        the Function menu the next turn takes offers what was just reviewed. Blocking."""
        self._publish(self._build(self._view(self.store.current)))

    def poke_embedder(self) -> None:
        """Memory vectors catch up (new memories, a changed model); nothing when off."""
        if self.memory_embedder is not None:
            self.memory_embedder.poke()

    def _build(self, plane: ControlPlane) -> ServedConfig:
        """What ``plane`` (this runtime's view of it) serves, carrying over the clients whose
        settings did not change from the version in force."""
        return build_served(
            plane, parts=self._parts, handlers=self.extra_tool_handlers, previous=self._served
        )

    def _publish(self, served: ServedConfig) -> None:
        old, self._served = self._served, served
        self._sync_memory_notes()
        self.poke_embedder()
        # A running turn may still stream through a replaced client: closed after turns.
        self._retired.extend(retired_clients(old, served))

    def _sync_memory_notes(self) -> None:
        """The store's workspace memories made those of the plane in force (`WorkspaceNotes`)."""
        if self._workspace_notes is not None:
            self._workspace_notes.sync(self.plane.memory_notes)

    # ---- what the chat path and the commands read

    def wake_rules(self) -> WakeRules:
        """The wake rules in force (a version whose pattern is bad is never published)."""
        return self._served.wake_rules

    def model_ref(self) -> str:
        """The model later turns use: the switched one while it still exists, else the default."""
        providers = self.plane.providers
        if self.model_override is not None and self.model_override in providers.models:
            return self.model_override
        return providers.default

    def text(self, key: str, values: Mapping[str, str] | None = None, **model: str) -> Text:
        """A ``message.yml`` line of the configuration in force (see ``ServedConfig.text``)."""
        return self._served.text(key, values, **model)

    def snapshot(self, granted: Collection[str] | None) -> TurnSnapshot:
        """What a turn fixes now: plane, model, client, tools for ``granted`` (None: no tools).

        Raises ``NotConfiguredError`` when the model cannot be called. Snapshots are memoised
        in the served configuration: every wake takes one.
        """
        return self._served.snapshot(
            self.model_ref(), granted, self._plugin_features(), self._game_line()
        )

    def persona(self, lane: Lane) -> str | None:
        """The persona text ``lane`` speaks as: ``config.yml``'s ``persona`` default of its
        lane type, from the configuration in force (a reload applies to later turns)."""
        soul = self.persona_soul(lane.owner)
        return None if soul is None else soul.text

    def persona_soul(self, owner: PlayerRef | None) -> Soul | None:
        """The soul of the public lane (``owner`` None) or of ``owner``'s private lane: the
        player's own choice (``/ai persona``) while its soul exists, else the default."""
        return soul_for(self.plane, self.persona_choices, owner)

    def budget_refusal(
        self,
        player_uuid: str,
        granted: Collection[str],
        question: str,
        *,
        session: PublicSession | None = None,
        player_name: str | None = None,
    ) -> BudgetRefusal | None:
        """The budget gate (`budget_gate`) over the session the turn replays: the public one
        unless named. None when budgets are off."""
        if self.budgets is None:
            return None
        replayed = self.session if session is None else session
        return budget_gate(
            self.budgets,
            self.plane,
            replayed,
            self.metrics,
            player_uuid,
            granted,
            question,
            player_name=player_name,
        )

    def _plugin_features(self) -> PluginFeatures:
        """What the offered tools depend on: whether a plugin is tracked, and its features
        while it is linked."""
        plugin = self.plugin
        return plugin is None, None if plugin is None or not plugin.linked else plugin.features

    def _game_line(self) -> str | None:
        """The instructions' sentence naming the linked server's game version (None unlinked)."""
        plugin = self.plugin
        hello = None if plugin is None or not plugin.linked else plugin.hello
        return None if hello is None else version_line(hello)

    def add_tool_handlers(self, handlers: Mapping[str, HandlerFn]) -> None:
        """Bind more tool handlers: the current version is served again with them (same plane,
        same clients); a running turn keeps the tools it started with."""
        self.extra_tool_handlers.update(handlers)
        self._publish(self._build(self._served.plane))
        self.prepare()

    async def _mcp_progress(self, context: CallContext, shown: str) -> None:
        """An MCP call's progress in its asker's action bar, as the round's tool line."""
        player = PlayerRef(uuid=context.player_uuid, name=context.player_name)
        await self.turn_output.action_bar_line(player, TOOLS, {"tools": shown})

    def _mcp_tools_changed(self) -> None:
        """An MCP server's tools or state changed: the current version is served again with
        them (same plane, same clients); a running turn keeps the tools it started with."""
        try:
            rebuilt = self._build(self._served.plane)
        except ConfigError:  # built once already: only a bug gets here; keep what serves
            log.exception("the MCP tools could not be served")
            return
        self._publish(rebuilt)

    def prepare(self) -> None:
        """Take the current model's snapshot ahead of the first wake: building the tool specs
        and the first request costs more than the plugin waits for a verdict. The MCP sessions
        follow the configuration in force (started on a running loop, else by ``mcp.start()``)."""
        plane = self.plane
        if self._owns_mcp:
            self.mcp.apply(plane.config.mcp, plane.directory / WORKSPACE_DIR)
        try:
            self.snapshot(())
        except NotConfiguredError as exc:
            # Once per plane, not per preparation; and not at all when the plane's own warnings
            # (printed at start, logged on reload) already name the missing key with its line.
            if self._warned_version != plane.version and not _key_warned(plane):
                log.warning("turns will fail until this is fixed: %s", exc)
            self._warned_version = plane.version

    def function_tools(self, context: CallContext) -> ToolInvoker:
        """The invoker of a Function's native calls: every tool of the configuration in force
        (the capabilities a Function declares are the owner's grant), with the shared
        cooldowns."""
        return self._served.invoker(None)

    def _public_turn_ended(self, snapshot: TurnSnapshot) -> None:
        task, asker = self.turn, self.turn_player
        if task is None or asker is None or not task.done() or task.cancelled():
            return
        if task.exception() is None and task.result().status == "completed":
            self.listen_decisions.answered(asker.name)

    def _close_retired_clients(self, snapshot: TurnSnapshot) -> None:
        """After-turn listener: close replaced clients once nothing can be using them."""
        if self.lanes.busy or not self._retired:
            return
        retired, self._retired = self._retired, []
        for client in retired:
            task = asyncio.get_running_loop().create_task(client.aclose())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    @property
    def players(self) -> PlayerState:
        """The per-player state (conversations, persona choices, listen opt-outs, retry offers,
        owed lines) in the archive's database, which it shares and never closes; the data
        folder's files of the bridges before it are imported at first use
        (`bridge.app.players.state_import`). Raises ``StoreError``."""
        if self._players is None:
            self._players = PlayerState(self.archive.database)
            import_files(self.plane.directory / DATA_DIR_NAME, self._players)
        return self._players

    async def aclose(self, *, close_stores: bool = True) -> None:
        """Stop the running turn (its commit finishes first), close clients and stores
        (``close_stores=False``: the archive and audit log stay open for the other servers of
        a network that share them)."""
        await self.listen_decisions.aclose()
        await self.conversation_titles.aclose()
        await self.lanes.aclose()
        await self.functions.aclose()
        self.mcp.remove_listener(self._mcp_tools_changed)
        if self._owns_mcp:
            await self.mcp.aclose()
        for client in [*self._served.clients, *self._retired]:
            await client.aclose()
        self._retired.clear()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
        if close_stores:
            self.audit.close()
            self.archive.close()
            if self.usage is not None:
                self.usage.close()
            self.reviews.close()
            if self.memory_embedder is not None:
                await self.memory_embedder.aclose()
            if self.memories is not None:
                self.memories.close()

    def _price_of(self, model_ref: str) -> ModelPrice | None:
        """The configured price of a model now (``providers.yml``), for the cost estimate."""
        model = self.plane.providers.models.get(model_ref)
        return None if model is None else model.price


def _key_warned(plane: ControlPlane) -> bool:
    return any(p.warning and p.path.endswith(".api_key") for p in plane.warnings)
