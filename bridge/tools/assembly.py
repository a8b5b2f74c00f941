"""Building the tool machinery from a published control plane.

The turn glue calls these once per control-plane version and keeps one ``Cooldowns`` for the
life of the process. Handlers that need the plugin link (snapshots, ``run_command``) or the
Function runtime (``call_function``) are passed in as ``extra_handlers`` by the code that owns
them; until then those tools are catalogued as ``not_built`` and offered to nobody.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from bridge.control.plane import ControlPlane
from bridge.control.workspace_files import WORKSPACE_DIR
from bridge.redaction import RedactionRule, Redactor
from bridge.store.audit_sink import AuditSink
from bridge.tools.file_tools import workspace_handlers
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.registry import (
    ExtraTool,
    HandlerFn,
    RegistryError,
    ToolAdmission,
    ToolRegistry,
)
from bridge.tools.skill_index import READ_SKILL, skill_reader
from bridge.tools.workspace import Workspace, WorkspaceLimits

WORKSPACE_HANDLERS = frozenset({"list", "read", "grep", READ_SKILL})


def workspace_for(plane: ControlPlane) -> Workspace:
    """The file tools over ``<config>/workspace`` with the limits of ``config.yml``; what they
    return is redacted with the plane's redactor before it is cut to those limits."""
    settings = plane.config.workspace
    limits = WorkspaceLimits(
        max_read_chars=settings.max_read_chars,
        max_results=settings.max_results,
        max_depth=settings.max_depth,
        timeout_ms=settings.timeout_ms,
    )
    return Workspace(plane.directory / WORKSPACE_DIR, limits=limits, redactor=plane.redactor)


def registry_for(
    plane: ControlPlane,
    *,
    extra_handlers: Mapping[str, HandlerFn] | None = None,
    notes: Mapping[str, str] | None = None,
    extra_tools: Sequence[ExtraTool] = (),
) -> ToolRegistry:
    """The registry of ``tools.yml`` with the file tools and ``read_skill`` (over the plane's
    skills) bound, plus ``extra_handlers``;
    ``notes`` extend the descriptions of a handler's tools (see ``ToolRegistry``);
    ``extra_tools`` come after the file's (an MCP server's)."""
    handlers = dict(workspace_handlers(workspace_for(plane)))
    handlers[READ_SKILL] = skill_reader(plane.skills)
    for name, handler in (extra_handlers or {}).items():
        if name in WORKSPACE_HANDLERS:
            raise RegistryError(f"{name} is already bound to the workspace")
        handlers[name] = handler
    return ToolRegistry.from_tools_file(plane.tools, handlers, notes=notes, extra=extra_tools)


def redactor_for(
    plane: ControlPlane, *, rules: Sequence[RedactionRule] = (), include_defaults: bool = True
) -> Redactor:
    """The plane's redactor (built-in rules, ``redaction.rules`` of ``config.yml`` and every
    secret value); extra ``rules`` or ``include_defaults=False`` build another one (tests)."""
    if not rules and include_defaults:
        return plane.redactor
    owner = [*rules, *plane.config.redaction.rules]
    return Redactor(owner, include_defaults=include_defaults, secret_values=plane.secret_values)


def cooldowns_for(current: Callable[[], ControlPlane]) -> Cooldowns:
    """The process's cooldowns, reading ``environment.tool_cooldown_ms`` of the plane in force
    at every call (a reload applies at once)."""
    return Cooldowns(cooldown_ms=lambda: current().config.environment.tool_cooldown_ms)


def invoker_for_player(
    registry: ToolRegistry,
    granted: frozenset[str],
    *,
    cooldowns: Cooldowns,
    redactor: Redactor,
    audit: AuditSink,
    admit: ToolAdmission | None = None,
) -> ToolInvoker:
    """The runner of one turn: the player's visible tools (``.tools.specs``) and their calls;
    ``admit`` narrows them further (a guest's, see ``ToolAdmission``)."""
    return ToolInvoker(
        registry.for_player(granted, admit=admit),
        cooldowns=cooldowns,
        redactor=redactor,
        audit=audit,
        granted=granted,
    )
