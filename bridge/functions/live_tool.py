"""`call_function` in a running bridge: the Function worker pool of the settings in force
(`bridge.functions.live_pool`), the control plane in force when a call starts, and a
`LiveFunctionHost` per call.

The pool starts on the first call (a server whose catalogue has no enabled Function never
pays for it) or when `start()` is awaited, is started again for the next call when a reload
changed its settings, and is closed by `aclose()` at shutdown. Each call builds a
`FunctionRuntime` from the plane it started under and holds its pool to its end, so a reload
never changes a running Function's source, limits or worker.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

from bridge.control.never_categories import effective_categories
from bridge.control.plane import ControlPlane
from bridge.errors import MineclawError
from bridge.functions.engine import Engine
from bridge.functions.live_host import LiveFunctionHost
from bridge.functions.live_pool import LivePool
from bridge.functions.pool_settings import PoolSettings, pool_settings
from bridge.functions.results import ErrorCode, error_result
from bridge.functions.review_state import ReviewBook
from bridge.functions.runtime import FunctionRuntime
from bridge.functions.suspensions import Suspension, Suspensions
from bridge.functions.tool import call_function_handler
from bridge.policy.approvals import ApprovalBroker
from bridge.policy.never_list import NeverList
from bridge.store.audit_sink import AuditSink
from bridge.tools.invoke import ToolInvoker
from bridge.tools.plugin_access import PluginAccess
from bridge.tools.registry import CallContext, HandlerFn

log = logging.getLogger(__name__)

CALL_FUNCTION = "call_function"


MENU_PARAMETERS_CHARS = 600
"""How much of a Function's parameter schema the menu shows; the call still validates it all."""


def has_enabled_functions(plane: ControlPlane, book: ReviewBook | None = None) -> bool:
    """Whether `call_function` is worth offering: some Function of the catalogue is enabled
    (and reviewed, when ``functions.require_review`` is on)."""
    book = book or ReviewBook()
    return any(book.may_offer(spec, plane.config.functions) for spec in plane.functions.functions)


def function_menu(plane: ControlPlane, book: ReviewBook | None = None) -> str:
    """What the model reads about the Functions it may call, added to `call_function`'s
    description: name, the owner's description and the argument schema. Never the source."""
    lines = ["Functions you can call (name: what it does; arguments as JSON Schema):"]
    for spec in (book or ReviewBook()).offered(plane.functions, plane.config.functions):
        schema = json.dumps(spec.parameters, separators=(",", ":"), sort_keys=True)
        if len(schema) > MENU_PARAMETERS_CHARS:
            schema = schema[:MENU_PARAMETERS_CHARS] + "…"
        lines.append(f"- {spec.name}: {spec.description.strip()} arguments: {schema}")
    return "\n".join(lines)


class LiveFunctions:
    """`native_tools(context)` gives the invoker a Function's native calls go through (the same
    validation, cooldowns, redaction and audit as a model call)."""

    def __init__(
        self,
        *,
        plane: Callable[[], ControlPlane],
        native_tools: Callable[[CallContext], ToolInvoker],
        audit: AuditSink,
        pool: Callable[[], PoolSettings] | None = None,
        reviews: ReviewBook | None = None,
    ) -> None:
        """`pool`: the worker pool settings in force (default: from `plane()`'s `functions`);
        `reviews`: the reviewed sources (``functions.require_review``)."""
        self._plane = plane
        self._native_tools = native_tools
        self._audit = audit
        self.plugin = PluginAccess()
        self.broker = ApprovalBroker()
        self.pool = LivePool(pool or (lambda: pool_settings(plane().config.functions)))
        self.suspensions = Suspensions()
        self.reviews = reviews or ReviewBook()
        self.suspension_listener: Callable[[Suspension], None] | None = None
        """Told when a Function is suspended (the operators' notice, wired by the app)."""

    def attach(self, plugin: PluginAccess, broker: ApprovalBroker) -> None:
        """Use the link tools' plugin view and broker, so approvals share one prompt machinery
        and `/mineclaw approve|deny` answers reach Function prompts too."""
        self.plugin, self.broker = plugin, broker

    def handlers(self) -> dict[str, HandlerFn]:
        return {CALL_FUNCTION: self.call_function}

    async def start(self) -> Engine:
        """The worker pool of the settings in force. Raises `EngineUnavailable`."""
        return await self.pool.start()

    async def aclose(self) -> None:
        await self.pool.aclose()

    async def call_function(self, arguments: dict[str, Any], context: CallContext) -> Any:
        plane = self._plane()
        async with contextlib.AsyncExitStack() as held:
            try:
                engine = await held.enter_async_context(self.pool.hold())
            except MineclawError as exc:
                log.error("no Function sandbox: %s", exc)
                return error_result(ErrorCode.ENGINE_UNAVAILABLE, "no sandbox could be created")
            host = LiveFunctionHost(
                plugin=self.plugin,
                broker=self.broker,
                tools=self._native_tools(context),
                origin=context,
                messages=lambda: plane.messages.approval,
                never=NeverList(
                    effective_categories(
                        plane.whitelist_file.never, plane.whitelist_file.never_categories
                    )
                ),
                never_opt_outs=frozenset(
                    spec.name for spec in plane.functions.functions if spec.allow_never
                ),
            )
            runtime = FunctionRuntime(
                catalogue=plane.functions,
                limits=plane.config.functions,
                engine=engine,
                host=host,
                audit=self._audit,
                suspensions=self.suspensions,
                on_suspended=self._suspended,
                reviewed=self.reviews.is_reviewed,
            )
            return await call_function_handler(runtime)(arguments, context)

    def _suspended(self, suspension: Suspension) -> None:
        if self.suspension_listener is not None:
            self.suspension_listener(suspension)
