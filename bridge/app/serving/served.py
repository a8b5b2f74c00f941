"""What one published control-plane version serves, built once when the version is published.

``build_served`` turns a ``ControlPlane`` into a frozen ``ServedConfig``: the compiled whitelist,
the wake rules, the redactor, the tool registry (with the Function menu), the tool cooldown,
the Function pool settings, the provider clients and the turn limits. A build that fails
raises ``ConfigError`` and publishes nothing, so the runtime's pair (plane, served
configuration) is always one that was built whole.

A turn takes one ``TurnSnapshot`` from the served configuration in force when it starts and
keeps it to its end. Only the checks the docs name as using the configuration in force at
call time (the whitelist and the Function catalogue) read the runtime's current one.

Provider clients outlive versions: a build reuses the previous version's client of a provider
whose settings did not change, so a reload that leaves a provider alone keeps its connections.
``retired_clients`` names the clients a new version no longer holds, for the runtime to close
once no turn can be streaming through them.

Snapshots, tool runners and message lines are memoised inside the served configuration (each
map bounded): they are per version by construction, so no key needs the version in it.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import AsyncGenerator, Callable, Collection, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

import httpx

from bridge.app.serving.budget_binding import PlayerBudget, guest_admission, limits_for
from bridge.app.serving.folder_verdict import refuse_unservable
from bridge.app.serving.memory_binding import memory_handlers, recall_for
from bridge.app.serving.provider_probes import ProviderProbes
from bridge.app.serving.provider_settings import model_settings, provider_settings
from bridge.app.serving.texts import text_for
from bridge.app.serving.web_binding import web_handlers, web_tool_names
from bridge.control import ControlPlane
from bridge.control.providers import ResolvedModel
from bridge.errors import ConfigError, MineclawError, TurnError
from bridge.functions.live_tool import CALL_FUNCTION, function_menu, has_enabled_functions
from bridge.functions.pool_settings import PoolSettings, pool_settings
from bridge.functions.review_state import ReviewBook
from bridge.link.messages import Text
from bridge.mcp.clients import McpClients
from bridge.memory.recall import QuestionVectors
from bridge.memory.store import MemoryStore
from bridge.policy.budgets import Budgets, is_guest
from bridge.policy.whitelist import Whitelist, compile_whitelist
from bridge.providers.client import ProviderClient
from bridge.providers.events import StreamEvent
from bridge.providers.identity import IdentitySettings
from bridge.providers.items import ProviderRequest, ToolSpec
from bridge.providers.settings import ModelSettings, ProviderSettings
from bridge.redaction import Redactor
from bridge.store.audit_sink import AuditSink
from bridge.tools.assembly import invoker_for_player, registry_for
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.memory_tools import MemoryTools
from bridge.tools.plugin_access import offered
from bridge.tools.registry import ExtraTool, HandlerFn, ToolRegistry
from bridge.tools.skill_index import instructions_with_skills
from bridge.turns.ports import ModelRoute, TurnLimits, TurnSnapshot
from bridge.turns.wake import WakeRules
from bridge.web.seam import TestNetwork

if TYPE_CHECKING:
    from bridge.tools.web_tools import WebOutcome  # the web stack loads only when web is on

log = logging.getLogger(__name__)

MAX_MODEL_ATTEMPTS = 3
"""A turn's attempts per model request, whatever ``retry.max_attempts`` says: a turn must not
hold the server for long."""
MAX_MEMOISED = 64
"""Distinct (model, permission set, plugin features) keys whose snapshots and tool runners a
version keeps; players share a handful in practice."""
MAX_MEMOISED_TEXTS = 1024

ModelStream = Callable[[ProviderRequest], AsyncGenerator[StreamEvent, None]]
"""Sends one request to a model and yields its events (`ServedConfig.model_stream`)."""
PluginFeatures = tuple[bool, frozenset[str] | None]
"""What the offered tools depend on: (no plugin is tracked, the linked plugin's features or
None while it is not linked)."""
NO_PLUGIN: PluginFeatures = (True, None)


def _with_game(instructions: str | None, game: str | None) -> str | None:
    """The instructions with the server's game version said once, after the owner's text."""
    if game is None:
        return instructions
    return f"{instructions}\n\n{game}" if instructions else game


class NotConfiguredError(TurnError):
    """The model a turn would use cannot be called (no API key, unknown model)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ProcessParts:
    """What every version's build is handed and no version owns: they outlive reloads.

    ``cooldowns``: the process's tool cooldowns (a cooldown outlives the turn and the version
    that started it). ``redact_now``: the redactor of the configuration in force, for the
    failure texts of clients that outlive the version that built them.
    """

    audit: AuditSink
    cooldowns: Cooldowns
    redact_now: Callable[[str], str]
    transport: httpx.AsyncBaseTransport | None = None
    budgets: Budgets | None = None
    """The process's token budgets (usage ledger and clock); None: usage is not counted."""
    web_counted: WebOutcome | None = None
    """Counts each web tool call in the metrics (``mineclaw_web_requests``)."""
    web_network: TestNetwork | None = None
    """The test network of ``MINECLAW_TEST_WEB_NETWORK`` (end-to-end tests only); None: the
    real resolver and connections."""
    reviews: ReviewBook = dataclasses.field(default_factory=ReviewBook)
    """The reviewed Function sources (``functions.require_review``: only those are offered)."""
    memories: MemoryStore | None = None
    """The memories automatic recall reads (None: memory is off for this process)."""
    memory_tools: MemoryTools | None = None
    """``remember`` and ``recall``, bound while ``memory.enabled``."""
    mcp: McpClients | None = None
    """The process's MCP sessions: their offered tools join each build's registry (while
    ``mcp.enabled``); None: no MCP tools."""
    memory_vectors: QuestionVectors | None = None
    """The question's embedding for a hybrid recall (None: keywords alone)."""
    probes: ProviderProbes = dataclasses.field(default_factory=ProviderProbes)
    """The providers' last probes, for the status page and ``/mineclaw status``."""


@dataclasses.dataclass(frozen=True, slots=True)
class ProviderEntry:
    """A provider's client and what it was built from (compared to reuse it)."""

    settings: ProviderSettings
    identity: IdentitySettings
    client: ProviderClient


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ServedConfig:
    """Everything one control-plane version serves; built by ``build_served``, never changed.

    The memo maps are the only mutable parts: caches of pure functions of the fields.
    """

    plane: ControlPlane
    whitelist: Whitelist
    wake_rules: WakeRules
    redactor: Redactor
    registry: ToolRegistry
    tool_cooldown_ms: int
    function_pool: PoolSettings
    web_tools: tuple[str, ...]
    """The web tools this version binds (empty while ``web.enabled`` is false)."""
    providers: Mapping[str, ProviderEntry]
    """The clients of the providers that can be called, by provider id."""
    unusable: Mapping[str, str]
    """Why each other provider cannot be called (its key is not set), by provider id."""
    parts: ProcessParts = dataclasses.field(repr=False, compare=False)
    _snapshots: dict[
        tuple[str, frozenset[str] | None, PluginFeatures, str | None], TurnSnapshot
    ] = dataclasses.field(default_factory=dict, repr=False, compare=False)
    _invokers: dict[tuple[frozenset[str] | None, PluginFeatures], ToolInvoker] = dataclasses.field(
        default_factory=dict, repr=False, compare=False
    )
    _texts: dict[tuple[str, tuple[tuple[str, str], ...]], Text] = dataclasses.field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def version(self) -> int:
        return self.plane.version

    async def provider_states(self) -> list[tuple[str, str]]:
        """Each provider's ``reachable`` / ``unreachable: …`` / ``not configured (…)``, probed
        at most once a minute (`ProviderProbes`); never on a turn's path."""
        configured = {pid: entry.settings for pid, entry in self.providers.items()}
        return await self.parts.probes.states(configured, self.unusable, self.parts.transport)

    @property
    def clients(self) -> tuple[ProviderClient, ...]:
        return tuple(entry.client for entry in self.providers.values())

    # ---- message lines

    def text(self, key: str, values: Mapping[str, str] | None = None, **model: str) -> Text:
        """A ``message.yml`` line with the assistant's ``<name>`` filled in.

        Every value is redacted whole here, before ``text_for`` bounds its length: this is the
        one way model text, reasons and names reach a chat line. Lines without model text are
        memoised: under listen mode the same refusal goes to the same player many times a
        second, and a Text is immutable."""
        plane = self.plane
        redact = self.redactor.redact_text
        filled = {"name": plane.config.identity.name}
        filled.update({name: redact(value) for name, value in (values or {}).items()})
        if model:
            shown = {name: redact(value) for name, value in model.items()}
            return text_for(plane.messages, key, filled, model=shown)
        memo_key = (key, tuple(sorted(filled.items())))
        text = self._texts.get(memo_key)
        if text is None:
            if len(self._texts) >= MAX_MEMOISED_TEXTS:
                self._texts.clear()
            text = self._texts[memo_key] = text_for(plane.messages, key, filled)
        return text

    # ---- turns

    def snapshot(
        self,
        model_ref: str,
        granted: Collection[str] | None,
        plugin: PluginFeatures = NO_PLUGIN,
        game: str | None = None,
    ) -> TurnSnapshot:
        """What a turn of ``model_ref`` fixes: model, client, tools for ``granted`` (None: no
        tools), limits. ``game``: the sentence naming the linked server's game version, put at
        the end of the instructions. Raises ``NotConfiguredError`` when the model cannot be
        called."""
        key = (model_ref, None if granted is None else frozenset(granted), plugin, game)
        snapshot = self._snapshots.get(key)
        if snapshot is None:
            snapshot = self._build_snapshot(model_ref, key[1], plugin, game)
            if len(self._snapshots) >= MAX_MEMOISED:
                self._snapshots.clear()
            self._snapshots[key] = snapshot
        return snapshot

    def invoker(
        self, granted: frozenset[str] | None, plugin: PluginFeatures = NO_PLUGIN
    ) -> ToolInvoker:
        """The tool runner of ``granted`` (None: every tool the catalogue grants through a
        permission, as a Function's native calls get), shared by every turn with the same
        facts: an invoker holds no per-turn state, and building the specs is most of a wake's
        cost otherwise."""
        key = (granted, plugin)
        invoker = self._invokers.get(key)
        if invoker is None:
            nodes = granted
            if nodes is None:
                nodes = frozenset(e.permission for e in self.registry.catalogue if e.permission)
            budgets = self.plane.config.budgets
            invoker = invoker_for_player(
                self.registry,
                nodes,
                cooldowns=self.parts.cooldowns,
                redactor=self.redactor,
                audit=self.parts.audit,
                # A guest is never offered, nor may call, paid or side-effect tools.
                admit=guest_admission(budgets.guest) if is_guest(granted, budgets) else None,
            )
            untracked, features = plugin
            if not untracked:  # None features: a tracked plugin that is not linked now
                invoker.tools = offered(
                    invoker.tools, features or frozenset(), linked=features is not None
                )
            if len(self._invokers) >= MAX_MEMOISED:
                self._invokers.clear()
            self._invokers[key] = invoker
        return invoker

    def limits(self, attempts: int) -> TurnLimits:
        config = self.plane.config
        return TurnLimits(
            max_tool_rounds=config.turn.max_tool_rounds,
            max_tool_calls=config.turn.max_tool_calls,
            max_failing_rounds=config.turn.max_failing_rounds,
            max_repeated_calls=config.turn.max_repeated_calls,
            reply_max_chars=config.chat.reply_max_chars,
            action_bar_max_chars=config.chat.action_bar_max_chars,
            reply_line_max_chars=config.chat.reply_line_max_chars,
            reply_max_lines=config.chat.reply_max_lines,
            reply_wrap=config.chat.reply_wrap,
            max_messages=config.context.max_messages,
            model_attempts=min(MAX_MODEL_ATTEMPTS, attempts),
        )

    def _build_snapshot(
        self,
        ref: str,
        granted: frozenset[str] | None,
        plugin: PluginFeatures,
        game: str | None = None,
    ) -> TurnSnapshot:
        resolved, client = self._route(ref)
        tools: tuple[ToolSpec, ...] = ()
        runner: ToolInvoker | None = None
        if granted is not None:
            runner = self.invoker(granted, plugin)
            tools = runner.tools.specs
        retry = self.providers[resolved.provider_id].settings.retry
        retry = dataclasses.replace(retry, max_attempts=resolved.provider.retry.max_attempts)
        budgets = self.plane.config.budgets
        limits = limits_for(self.limits(resolved.provider.retry.max_attempts), granted, budgets)
        process_budgets = self.parts.budgets
        budget = None
        if process_budgets is not None:  # without a player's facts: the server's budget
            budget = PlayerBudget(process_budgets, granted, budgets)
        return TurnSnapshot(
            control_version=str(self.plane.version),
            model_ref=ref,
            stream=functools.partial(
                client.stream, model=model_settings(resolved.model_name, resolved.model)
            ),
            instructions=_with_game(
                instructions_with_skills(
                    self.plane.agents_md,
                    self.plane.skills,
                    None if runner is None else runner.tools,
                    self.redactor,
                ),
                game,
            ),
            tools=tools,
            native_tools=tuple(dict(tool) for tool in resolved.provider.native_tools),
            tool_runner=runner,
            limits=limits,
            compaction_trigger_tokens=resolved.model.limits.compaction_trigger,
            retry=retry,
            fallbacks=self._fallback_routes(resolved.model.fallbacks),
            redactor=self.redactor,
            budget=budget,
            recall=recall_for(
                self.parts.memories,
                self.plane.config.memory,
                self.redactor,
                guest=is_guest(granted, budgets),
                vectors=self.parts.memory_vectors,
            ),
            output_cap=resolved.model.limits.max_output_tokens,
        )

    def model_stream(self, ref: str) -> ModelStream:
        """A one-off request stream of model ``ref`` (conversation titles): the provider's
        client with the model's settings, no tools, no retries. ``NotConfiguredError`` when it
        cannot be called."""
        client, model = self.one_off_route(ref)
        return functools.partial(client.stream, model=model)

    def one_off_route(self, ref: str) -> tuple[ProviderClient, ModelSettings]:
        """Model ``ref``'s provider client and settings, for a one-off request made elsewhere
        (listen decisions, on their own loop). ``NotConfiguredError`` when it cannot be
        called."""
        resolved, client = self._route(ref)
        return client, model_settings(resolved.model_name, resolved.model)

    def why_unusable(self, ref: str) -> str | None:
        """Why the model ``ref`` cannot be called (its provider's key or server missing, an
        unknown model), or None: what a model switch must not accept silently."""
        try:
            self._route(ref)
        except NotConfiguredError as exc:
            return str(exc)
        return None

    def _route(self, ref: str) -> tuple[ResolvedModel, ProviderClient]:
        """The model ``ref`` and its provider's client; ``NotConfiguredError`` when it cannot
        be called."""
        try:
            resolved = self.plane.providers.resolve(ref)
        except ConfigError as exc:
            raise NotConfiguredError(str(exc)) from exc
        entry = self.providers.get(resolved.provider_id)
        if entry is None:
            raise NotConfiguredError(self.unusable.get(resolved.provider_id, "not configured"))
        return resolved, entry.client

    def _fallback_routes(self, refs: Sequence[str]) -> tuple[ModelRoute, ...]:
        """The routes of a model's fallbacks. One that cannot be called now (its key is not
        set) is left out with a warning rather than failing every turn of the model."""
        routes: list[ModelRoute] = []
        for ref in refs:
            try:
                resolved, client = self._route(ref)
            except NotConfiguredError as exc:
                log.warning("fallback %s left out: %s", ref, exc)
                continue
            retry = self.providers[resolved.provider_id].settings.retry
            attempts = min(MAX_MODEL_ATTEMPTS, resolved.provider.retry.max_attempts)
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


def build_served(
    plane: ControlPlane,
    *,
    parts: ProcessParts,
    handlers: Mapping[str, HandlerFn],
    previous: ServedConfig | None = None,
) -> ServedConfig:
    """Everything ``plane`` serves. ``handlers``: the tool handlers other parts provide
    (snapshots, ``run_command``, ``call_function``). ``previous``: the version in force, whose
    clients are reused where a provider's settings did not change.

    Raises ``ConfigError`` naming the file for anything that cannot be built (a wake pattern
    that does not compile or would wake on every message, a tool registry that cannot bind);
    the clients are built last, after everything that can fail, so a refused version leaves
    no client open behind it. First the folder's one verdict
    (``bridge.app.serving.folder_verdict``): whatever ``validate`` calls an error is refused here
    too, at start and on every reload."""
    refuse_unservable(plane)
    try:
        wake_rules = WakeRules.from_settings(plane.config.chat)
    except TurnError as exc:
        raise ConfigError(f"config.yml: {exc}") from exc
    web = web_handlers(
        plane, audit=parts.audit, counted=parts.web_counted, network=parts.web_network
    )
    memory = memory_handlers(plane, parts.memory_tools)
    mcp = plane.config.mcp
    mcp_tools = (
        parts.mcp.tools(require_review=mcp.require_review)
        if parts.mcp is not None and mcp.enabled
        else ()
    )
    try:
        registry = _registry(plane, {**handlers, **web, **memory}, parts.reviews, mcp_tools)
    except MineclawError as exc:
        raise ConfigError(f"tools.yml: {exc}") from exc
    whitelist = compile_whitelist(plane.whitelist_file)
    providers, unusable = _providers(plane, parts, previous)
    return ServedConfig(
        plane=plane,
        whitelist=whitelist,
        wake_rules=wake_rules,
        redactor=plane.redactor,
        registry=registry,
        tool_cooldown_ms=plane.config.environment.tool_cooldown_ms,
        function_pool=pool_settings(plane.config.functions),
        web_tools=tuple(web_tool_names(web)),
        providers=MappingProxyType(providers),
        unusable=MappingProxyType(unusable),
        parts=parts,
    )


def retired_clients(old: ServedConfig, new: ServedConfig) -> list[ProviderClient]:
    """The clients ``old`` holds and ``new`` does not: to close once no turn uses them."""
    kept = {id(client) for client in new.clients}
    return [client for client in old.clients if id(client) not in kept]


def _registry(
    plane: ControlPlane,
    handlers: Mapping[str, HandlerFn],
    reviews: ReviewBook,
    extra: Sequence[ExtraTool] = (),
) -> ToolRegistry:
    notes: dict[str, str] = {}
    if has_enabled_functions(plane, reviews):  # the model learns what it may call, never how
        notes[CALL_FUNCTION] = function_menu(plane, reviews)
    else:  # nothing to call: call_function is not offered
        handlers = {name: h for name, h in handlers.items() if name != CALL_FUNCTION}
    return registry_for(plane, extra_handlers=handlers, notes=notes, extra_tools=extra)


def _providers(
    plane: ControlPlane, parts: ProcessParts, previous: ServedConfig | None
) -> tuple[dict[str, ProviderEntry], dict[str, str]]:
    chosen = plane.config.identity
    identity = IdentitySettings(
        include_player_name_field=chosen.include_player_name_field,
        include_player_content_prefix=chosen.include_player_content_prefix,
    )
    entries: dict[str, ProviderEntry] = {}
    unusable: dict[str, str] = {}
    for provider_id, config in plane.providers.providers.items():
        if config.api_key_missing:
            unusable[provider_id] = f"{config.api_key_env or 'the API key'} is not set"
            continue
        try:
            settings = provider_settings(provider_id, config)
        except ConfigError as exc:
            unusable[provider_id] = str(exc)
            continue
        # The engine owns a request's attempts (bridge.turns.attempts, one retry policy): a
        # client never retries on its own.
        settings = dataclasses.replace(
            settings, retry=dataclasses.replace(settings.retry, max_attempts=1)
        )
        old = previous.providers.get(provider_id) if previous is not None else None
        if old is not None and (old.settings, old.identity) == (settings, identity):
            entries[provider_id] = old  # a reload that left it alone keeps its connections
            continue
        client = ProviderClient(
            settings, identity=identity, transport=parts.transport, redact=parts.redact_now
        )
        entries[provider_id] = ProviderEntry(settings, identity, client)
    return entries, unusable
