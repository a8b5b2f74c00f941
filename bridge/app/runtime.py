"""Everything one ``serve`` process owns, and the snapshot each turn fixes when it starts.

Provider clients are cached per provider id and kept across reloads that leave the provider's
settings alone (a replaced client is closed once no turn can be using it); the tool registry
and the wake rules are cached per control-plane version. A turn start costs lookups, not
construction. A reload or a model
switch changes what the *next* snapshot holds; a running turn keeps its own.

Attempts: the engine owns a model request's attempts. Each client is built with
``max_attempts=1`` so it never retries on its own; the turn's budget and pauses are the
provider's ``retry`` settings (attempts capped at three, so a turn cannot hold the server for
long), spent by ``bridge.turns.attempts`` through the one retry policy
(``bridge.providers.retry``). One budget, one place that spends it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import httpx

from bridge.app.output import LinkTurnOutput
from bridge.app.provider_settings import model_settings, provider_settings
from bridge.app.restart_settings import restart_needed
from bridge.app.texts import text_for
from bridge.control import ControlPlane, ControlPlaneStore
from bridge.control.providers import ResolvedModel
from bridge.errors import ConfigError, MineclawError, TurnError
from bridge.functions.live_tool import (
    CALL_FUNCTION,
    LiveFunctions,
    function_menu,
    has_enabled_functions,
)
from bridge.link.handler import Link
from bridge.link.messages import Text
from bridge.providers.client import ProviderClient
from bridge.providers.identity import IdentitySettings
from bridge.providers.items import ToolSpec
from bridge.providers.settings import ProviderSettings
from bridge.redaction import Redactor
from bridge.store.archive import DATA_DIR_NAME, TurnArchive
from bridge.store.audit import AuditLog
from bridge.tools.assembly import cooldowns_for, invoker_for_player, redactor_for, registry_for
from bridge.tools.invoke import ToolInvoker
from bridge.tools.plugin_access import PluginAccess, offered
from bridge.tools.registry import CallContext, HandlerFn, ToolRegistry
from bridge.turns.activity import ServerActivity
from bridge.turns.compaction import Compactor
from bridge.turns.engine import TurnEngine, TurnOutcome
from bridge.turns.gates import ChatGates
from bridge.turns.listen import ListenMode
from bridge.turns.ports import ModelRoute, PlayerRef, TurnLimits, TurnOutput, TurnSnapshot
from bridge.turns.session import PublicSession
from bridge.turns.wake import WakeRules

log = logging.getLogger(__name__)

MAX_MODEL_ATTEMPTS = 3
MAX_CACHED_INVOKERS = 64
MAX_CACHED_TEXTS = 1024
"""Distinct permission sets whose tool runners are kept; players share a handful in practice."""


class NotConfiguredError(TurnError):
    """The model a turn would use cannot be called (no API key, unknown model)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeSettings:
    """action_bar_interval_s: the least time between two action-bar frames (0.075 s)."""

    action_bar_interval_s: float = 0.075


BRIDGE_LOGGER = "bridge"
"""The logger whose level ``logging.level`` sets: every bridge module logs below it."""


def apply_log_level(plane: ControlPlane) -> None:
    """Set the bridge's log level from ``logging.level``. Only the bridge's own loggers: the
    handlers ``serve`` installs pass every level, so this one setting decides."""
    logging.getLogger(BRIDGE_LOGGER).setLevel(plane.config.logging.level)


class Runtime:
    """Build with ``Runtime.open(config_dir, output=...)``; close with ``await aclose()``.

    ``extra_tool_handlers``: handlers for the tools other parts provide (snapshots,
    ``run_command``, ``call_function``), bound into every registry this runtime builds.
    ``transport``: handed to every provider client's httpx client (tests answer the model's
    requests in process with ``httpx.MockTransport`` where the wire is not what they test).
    ``manage_logging``: apply ``logging.level`` at open and again on every reload (``serve``;
    tests that share the process's loggers leave it off).
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
    ) -> None:
        self.store = store
        self.archive = archive
        self.audit = audit
        # Every audit field is redacted whole with the plane in force when it is written.
        audit.redact_with(lambda fields: self.plane.redactor.redact_json(fields))
        self.settings = settings
        self.extra_tool_handlers = dict(extra_tool_handlers or {})
        self._transport = transport
        self.link: Link | None = None
        self.plugin: PluginAccess | None = None
        """The connected plugin and its features (set by the app handler): a tool the plugin
        cannot serve is not shown to the model."""
        self.activity = ServerActivity()
        self.session = PublicSession()
        self.listen = ListenMode()
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
        """Who asked the latest turn, for the notice when it is stopped."""
        self.engine = TurnEngine(
            session=self.session,
            archive=archive,
            audit=audit,
            output=output or LinkTurnOutput(self),
            activity=self.activity,
            action_bar_interval_s=settings.action_bar_interval_s,
        )
        self.compactor = Compactor(
            session=self.session,
            activity=self.activity,
            audit=audit,
        )
        self.engine.add_after_turn(self.compactor.after_turn)
        self.engine.add_after_turn(self._close_retired_clients)
        self._clients: dict[str, _CachedClient] = {}
        self._retired: list[ProviderClient] = []
        self._closing: set[asyncio.Task[None]] = set()
        self._registries: dict[int, ToolRegistry] = {}
        self._redactors: tuple[int, Redactor] | None = None
        self._invokers: dict[tuple[frozenset[str], bool, frozenset[str] | None], ToolInvoker] = {}
        self._texts: dict[tuple[int, str, tuple[tuple[str, str], ...]], Text] = {}
        self._invokers_of: ToolRegistry | None = None
        self._snapshots: dict[
            tuple[str, frozenset[str] | None, tuple[bool, frozenset[str] | None]], TurnSnapshot
        ] = {}
        self._snapshots_of: tuple[int, ToolRegistry] | None = None
        self._wake_rules: tuple[int, WakeRules] | None = None
        self._warned_version: int | None = None
        self._cooldowns = cooldowns_for(lambda: self.plane)
        # call_function: one V8 engine for the process, started by the first call.
        self.functions = LiveFunctions(
            plane=lambda: self.plane, native_tools=self.function_tools, audit=audit
        )
        self.extra_tool_handlers.update(self.functions.handlers())
        self.wake_rules()  # a bad wake pattern stops the start, naming the key

    @classmethod
    def open(
        cls,
        config_dir: Path,
        *,
        settings: RuntimeSettings = RuntimeSettings(),
        environ: Mapping[str, str] | None = None,
        manage_logging: bool = False,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> Runtime:
        """Load the control plane and open the archive and audit log in ``<config>/data``.

        Raises ``ConfigError`` or ``StoreError``.
        """
        store = ControlPlaneStore(config_dir, environ=environ)
        data_dir = config_dir / DATA_DIR_NAME
        archive = TurnArchive.in_config_dir(config_dir)
        try:
            audit = AuditLog.in_data_dir(data_dir)
        except MineclawError:
            archive.close()
            raise
        try:
            runtime = cls(
                store=store, archive=archive, audit=audit, settings=settings, transport=transport
            )
            runtime.environ = environ
            runtime.manage_logging = manage_logging
        except MineclawError:  # a bad wake pattern: nothing may stay open behind the error
            audit.close()
            archive.close()
            raise
        if manage_logging:
            apply_log_level(runtime.plane)
        runtime.prepare()
        return runtime

    @property
    def plane(self) -> ControlPlane:
        return self.store.current

    def reload(self) -> ControlPlane:
        """Load the folder again and publish it, refusing a plane whose wake pattern would wake
        on every message or does not compile; on ``ConfigError`` the old plane stays. Blocking
        (it reads files): run it in a worker thread."""

        def check(candidate: ControlPlane) -> None:
            try:
                WakeRules.from_settings(candidate.config.chat)
            except TurnError as exc:
                raise ConfigError(f"config.yml: {exc}") from exc

        # One read of the folder, checked and then published by the store.
        plane = self.store.reload(check)
        if self.manage_logging:
            apply_log_level(plane)
        self.restart_pending = restart_needed(self.started_with, plane)
        for note in self.restart_pending:
            log.warning("%s", note)
        for warning in plane.warnings:  # serve prints the first plane's; these are the news
            log.warning("%s", warning)
        return plane

    # ---- what the chat path and the commands read

    def wake_rules(self) -> WakeRules:
        """The wake rules of the current plane; raises ``ConfigError`` for a bad pattern."""
        plane = self.plane
        cached = self._wake_rules
        if cached is not None and cached[0] == plane.version:
            return cached[1]
        try:
            rules = WakeRules.from_settings(plane.config.chat)
        except TurnError as exc:
            raise ConfigError(f"config.yml: {exc}") from exc
        self._wake_rules = (plane.version, rules)
        return rules

    def model_ref(self) -> str:
        """The model later turns use: the switched one while it still exists, else the default."""
        providers = self.plane.providers
        if self.model_override is not None and self.model_override in providers.models:
            return self.model_override
        return providers.default

    def text(self, key: str, values: Mapping[str, str] | None = None, **model: str) -> Text:
        """A ``message.yml`` line with the assistant's ``<name>`` filled in.

        Lines without model text are kept (per plane version): under listen mode the same
        refusal goes to the same player many times a second, and a Text is immutable."""
        plane = self.plane
        # Every value is redacted whole here, before `text_for` bounds its length: this is the
        # one way model text, reasons and names reach a chat line.
        redact = plane.redactor.redact_text
        filled = {"name": plane.config.identity.name}
        filled.update({name: redact(value) for name, value in (values or {}).items()})
        if model:
            shown = {name: redact(value) for name, value in model.items()}
            return text_for(plane.messages, key, filled, model=shown)
        cache_key = (plane.version, key, tuple(sorted(filled.items())))
        text = self._texts.get(cache_key)
        if text is None:
            if len(self._texts) >= MAX_CACHED_TEXTS:
                self._texts.clear()
            text = self._texts[cache_key] = text_for(plane.messages, key, filled)
        return text

    # ---- snapshots

    def snapshot(self, granted: Collection[str] | None) -> TurnSnapshot:
        """What a turn fixes now: plane, model, client, tools for ``granted`` (None: no tools).

        Raises ``NotConfiguredError`` when the model cannot be called. A snapshot is immutable
        and everything in it derives from the plane, the model, the registry, the permission
        facts and the plugin's features, so one is kept per such key: every wake builds one,
        and building it is about a tenth of a wake's time on the loop.
        """
        plane = self.plane
        ref = self.model_ref()
        registry = self.registry(plane)
        if self._snapshots_of != (plane.version, registry):
            self._snapshots, self._snapshots_of = {}, (plane.version, registry)
        key = (ref, None if granted is None else frozenset(granted), self._plugin_features())
        snapshot = self._snapshots.get(key)
        if snapshot is None:
            snapshot = self._build_snapshot(plane, ref, key[1])
            if len(self._snapshots) >= MAX_CACHED_INVOKERS:
                self._snapshots.clear()
            self._snapshots[key] = snapshot
        return snapshot

    def _plugin_features(self) -> tuple[bool, frozenset[str] | None]:
        """What the offered tools depend on: whether a plugin is tracked, and its features
        while it is linked."""
        plugin = self.plugin
        return plugin is None, None if plugin is None or not plugin.linked else plugin.features

    def _build_snapshot(
        self, plane: ControlPlane, ref: str, granted: frozenset[str] | None
    ) -> TurnSnapshot:
        try:
            resolved = plane.providers.resolve(ref)
        except ConfigError as exc:
            raise NotConfiguredError(str(exc)) from exc
        if resolved.provider.api_key_missing:
            env = resolved.provider.api_key_env or "the API key"
            raise NotConfiguredError(f"{env} is not set")
        client = self._client(plane, resolved)
        limits = TurnLimits(
            max_tool_rounds=plane.config.turn.max_tool_rounds,
            max_tool_calls=plane.config.turn.max_tool_calls,
            reply_max_chars=plane.config.chat.reply_max_chars,
            action_bar_max_chars=plane.config.chat.action_bar_max_chars,
            reply_line_max_chars=plane.config.chat.reply_line_max_chars,
            reply_max_lines=plane.config.chat.reply_max_lines,
            reply_wrap=plane.config.chat.reply_wrap,
            max_messages=plane.config.context.max_messages,
            model_attempts=min(MAX_MODEL_ATTEMPTS, resolved.provider.retry.max_attempts),
        )
        tools: tuple[ToolSpec, ...] = ()
        runner: ToolInvoker | None = None
        if granted is not None:
            runner = self._invoker(plane, granted)
            tools = runner.tools.specs
        return TurnSnapshot(
            control_version=str(plane.version),
            model_ref=ref,
            stream=functools.partial(
                client.stream, model=model_settings(resolved.model_name, resolved.model)
            ),
            instructions=plane.agents_md.strip() or None,
            tools=tools,
            native_tools=tuple(dict(tool) for tool in resolved.provider.native_tools),
            tool_runner=runner,
            limits=limits,
            compaction_trigger_tokens=resolved.model.limits.compaction_trigger,
            retry=provider_settings(resolved.provider_id, resolved.provider).retry,
            fallbacks=self._fallback_routes(plane, resolved.model.fallbacks),
            redactor=plane.redactor,
        )

    def _fallback_routes(self, plane: ControlPlane, refs: Sequence[str]) -> tuple[ModelRoute, ...]:
        """The routes of a model's fallbacks. One that cannot be called now (its key is not
        set) is left out with a warning rather than failing every turn of the model."""
        routes: list[ModelRoute] = []
        for ref in refs:
            try:
                resolved = plane.providers.resolve(ref)
                if resolved.provider.api_key_missing:
                    raise ConfigError(
                        f"{resolved.provider.api_key_env or 'its API key'} is not set"
                    )
                client = self._client(plane, resolved)
                retry = provider_settings(resolved.provider_id, resolved.provider).retry
            except (ConfigError, NotConfiguredError) as exc:
                log.warning("fallback %s left out: %s", ref, exc)
                continue
            attempts = min(MAX_MODEL_ATTEMPTS, retry.max_attempts)
            routes.append(
                ModelRoute(
                    model_ref=ref,
                    stream=functools.partial(
                        client.stream, model=model_settings(resolved.model_name, resolved.model)
                    ),
                    policy=dataclasses.replace(retry, max_attempts=attempts),
                )
            )
        return tuple(routes)

    def add_tool_handlers(self, handlers: Mapping[str, HandlerFn]) -> None:
        """Bind more tool handlers; the next snapshot's registry has them (a running turn keeps
        the tools it started with)."""
        self.extra_tool_handlers.update(handlers)
        self._registries.clear()
        self.prepare()

    def prepare(self) -> None:
        """Build the current plane's client and registry ahead of the first wake: the first
        costs a few hundred milliseconds (TLS context, schema validators), more than the
        plugin waits for a verdict."""
        plane = self.plane
        self.registry(plane)
        try:
            self.snapshot(())
        except NotConfiguredError as exc:
            # Once per plane, not per preparation; and not at all when the plane's own warnings
            # (printed at start, logged on reload) already name the missing key with its line.
            if self._warned_version != plane.version and not _key_warned(plane):
                log.warning("turns will fail until this is fixed: %s", exc)
            self._warned_version = plane.version

    def _invoker(self, plane: ControlPlane, granted: frozenset[str]) -> ToolInvoker:
        """The turn's tool runner, shared by every turn with the same registry and permission
        facts (an invoker holds no per-turn state): building the specs is most of a wake's
        cost otherwise."""
        registry = self.registry(plane)
        if self._invokers_of is not registry:
            self._invokers, self._invokers_of = {}, registry
        untracked, features = self._plugin_features()
        key = (granted, untracked, features)
        invoker = self._invokers.get(key)
        if invoker is None:
            if len(self._invokers) >= MAX_CACHED_INVOKERS:
                self._invokers.clear()
            invoker = invoker_for_player(
                registry,
                granted,
                cooldowns=self._cooldowns,
                redactor=self._redactor(plane),
                audit=self.audit,
            )
            if not untracked:  # None features: a tracked plugin that is not linked now
                invoker.tools = offered(
                    invoker.tools, features or frozenset(), linked=features is not None
                )
            self._invokers[key] = invoker
        return invoker

    def _redactor(self, plane: ControlPlane) -> Redactor:
        cached = self._redactors
        if cached is None or cached[0] != plane.version:
            cached = self._redactors = (plane.version, redactor_for(plane))
        return cached[1]

    def registry(self, plane: ControlPlane) -> ToolRegistry:
        registry = self._registries.get(plane.version)
        if registry is None:
            handlers = self.extra_tool_handlers
            notes: dict[str, str] = {}
            if has_enabled_functions(plane):  # the model learns what it may call, never how
                notes[CALL_FUNCTION] = function_menu(plane)
            else:  # nothing to call: call_function is not offered
                handlers = {n: h for n, h in handlers.items() if n != CALL_FUNCTION}
            registry = registry_for(plane, extra_handlers=handlers, notes=notes)
            self._registries = {plane.version: registry}  # older versions: only running turns
        return registry

    def function_tools(self, context: CallContext) -> ToolInvoker:
        """The invoker of a Function's native calls: every tool of the current plane (the
        capabilities a Function declares are the owner's grant), with the shared cooldowns."""
        plane = self.plane
        registry = self.registry(plane)
        nodes = frozenset(entry.permission for entry in registry.catalogue if entry.permission)
        return invoker_for_player(
            registry,
            nodes,
            cooldowns=self._cooldowns,
            redactor=redactor_for(plane),
            audit=self.audit,
        )

    def _client(self, plane: ControlPlane, resolved: ResolvedModel) -> ProviderClient:
        cached = self._clients.get(resolved.provider_id)
        if cached is not None and cached.version == plane.version:
            return cached.client
        try:
            settings = provider_settings(resolved.provider_id, resolved.provider)
        except ConfigError as exc:
            raise NotConfiguredError(str(exc)) from exc
        # The engine owns the attempts (see the module docstring).
        settings = dataclasses.replace(
            settings, retry=dataclasses.replace(settings.retry, max_attempts=1)
        )
        chosen = plane.config.identity
        identity = IdentitySettings(
            include_player_name_field=chosen.include_player_name_field,
            include_player_content_prefix=chosen.include_player_content_prefix,
        )
        if cached is not None and (cached.settings, cached.identity) == (settings, identity):
            # A reload that left this provider alone keeps its client and its connections.
            self._clients[resolved.provider_id] = dataclasses.replace(cached, version=plane.version)
            return cached.client
        # The current plane's redactor, whichever plane built the client: it knows every secret
        # configured now, and a failure text is redacted before it is clipped.
        client = ProviderClient(
            settings,
            identity=identity,
            transport=self._transport,
            redact=lambda t: self.plane.redact(t),
        )
        if cached is not None:
            self._retired.append(cached.client)  # a running turn may still stream through it
        self._clients[resolved.provider_id] = _CachedClient(
            plane.version, settings, identity, client
        )
        return client

    def _close_retired_clients(self, snapshot: TurnSnapshot) -> None:
        """After-turn listener: close replaced clients once nothing can be using them."""
        if self.activity.busy or not self._retired:
            return
        retired, self._retired = self._retired, []
        for client in retired:
            task = asyncio.get_running_loop().create_task(client.aclose())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        """Stop the running turn (its commit finishes first), close clients and stores."""
        self.engine.stop()
        if self.turn is not None and not self.turn.done():
            await asyncio.wait([self.turn], timeout=10)
        await self.functions.aclose()
        for client in [cached.client for cached in self._clients.values()] + self._retired:
            await client.aclose()
        self._clients.clear()
        self._retired.clear()
        self.audit.close()
        self.archive.close()


@dataclasses.dataclass(frozen=True, slots=True)
class _CachedClient:
    """A provider's client, the settings it was built with and the plane version last seen."""

    version: int
    settings: ProviderSettings
    identity: IdentitySettings
    client: ProviderClient


def _key_warned(plane: ControlPlane) -> bool:
    return any(p.warning and p.path.endswith(".api_key") for p in plane.warnings)
