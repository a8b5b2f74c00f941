"""The tool registry: which tools exist, and which of them one player may see in one turn.

Only the built-in handlers below exist. ``tools.yml`` names, describes, disables and gates them;
its ``handler`` field picks one of these names and can never add another. A handler that is
built in but not bound to code in this process (the snapshot tools need the plugin link) is
listed as ``not_built`` and offered to nobody.

``for_player`` is the gate: a tool whose permission node the player does not hold is left out
of the turn's catalogue entirely, so the model never learns it exists, and a call to it is
answered exactly like a call to a tool that does not exist.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import ValidationError

from bridge.control.problems import Problem, format_path
from bridge.control.tools_file import TOOL_NAME, Handler, ToolsFile
from bridge.control.tools_file import ToolSpec as ToolEntry
from bridge.control.validation import plain_message
from bridge.control.yaml_strict import YamlDocument
from bridge.errors import ToolError
from bridge.providers.items import ToolSpec
from bridge.schemas import SafeSchema

log = logging.getLogger(__name__)

Effect = Literal[
    "reads_workspace",
    "reads_game",
    "reads_web",
    "dispatches_commands",
    "runs_functions",
    "asks_players",
    "reads_memory",
    "writes_memory",
    "calls_mcp",
]
Status = Literal["available", "disabled", "not_built", "invalid"]


@dataclass(frozen=True, slots=True)
class CallContext:
    """Who a call is for: the asking player's uuid and name (``"console"`` offline).

    ``batch`` names the model reply the call came in (its turn and round), so the calls of one
    reply share one cooldown admission; None for a call made on its own (CLI, Functions)."""

    turn_id: str
    call_id: str
    player_uuid: str
    player_name: str
    batch: str | None = None
    lane_id: str = "public"
    """The lane of the turn (``public``, or a private lane's id)."""
    granted: frozenset[str] = frozenset()
    """The asker's permission nodes (a tool that checks a node of its own: ``remember``)."""


HandlerFn = Callable[[dict[str, Any], CallContext], Awaitable[Any]]
ToolAdmission = Callable[[str, ToolEntry], bool]
"""Whether the asking player may use a tool at all beyond its permission node (a guest's
limits, `bridge.policy.guest_tools`): asked when the catalogue is built and at every call."""
"""A built-in's code: validated arguments in, a JSON-able result out (or ``ToolFailure``)."""


@dataclass(frozen=True, slots=True)
class HandlerTraits:
    """What a built-in handler declares of itself: what it does (``effect``) and whether its
    result depends on who asks (``personal``).

    A personal result is the asker's alone: a later request replays the call with the result
    withheld (`bridge.turns.session`), and a public turn that took one answers its asker alone
    and stays out of the shared session and the public conversation index
    (`bridge.turns.engine`). Two kinds of shared handler read the asker: ``routed_by_asker``
    only to pick the server the asker is on in a network (the answer is that server's, the
    same for everyone on it), ``acts_for_asker`` only to act on their behalf (their
    permissions decide whether it runs, they are the one asked) while its result says what
    happened in the world, in words that do not depend on who asked.
    ``tests/app/test_tool_privacy.py`` fails for a handler that reads the asker and is none of
    these."""

    effect: Effect
    personal: bool
    routed_by_asker: bool = False
    acts_for_asker: bool = False


def _shared(effect: Effect, *, routed: bool = False, acts: bool = False) -> HandlerTraits:
    return HandlerTraits(effect, personal=False, routed_by_asker=routed, acts_for_asker=acts)


def _personal(effect: Effect) -> HandlerTraits:
    return HandlerTraits(effect, personal=True)


HANDLERS: Mapping[str, HandlerTraits] = {
    # The asker's own position, health, items, what they look at.
    "player_snapshot": _personal("reads_game"),
    "item_inspect": _personal("reads_game"),
    "block_inspect": _personal("reads_game"),
    "online_players": _shared("reads_game", routed=True),
    "list": _shared("reads_workspace"),
    "read": _shared("reads_workspace"),
    "grep": _shared("reads_workspace"),
    # Runs for the asker (their permissions, "own" targets decide whether it runs); the
    # result is the dispatch and the console's feedback, the same whoever asked.
    "run_command": _shared("dispatches_commands", acts=True),
    # A Function is handed the asker's name and UUID and may answer by them.
    "call_function": _personal("runs_functions"),
    "read_skill": _shared("reads_workspace"),
    # Asks the asker; the result is what they answered, which they said in the turn's lane.
    "ask_player": _shared("asks_players", acts=True),
    "recipe_lookup": _shared("reads_game", routed=True),
    "item_facts": _shared("reads_game", routed=True),
    "list_plugins": _shared("reads_game", routed=True),
    # The commands the asker may run, by their permissions.
    "list_commands": _personal("reads_game"),
    "web_fetch": _shared("reads_web"),
    "web_search": _shared("reads_web"),
    "remember": _personal("writes_memory"),
    "recall": _personal("reads_memory"),
    # An MCP server's tool may do anything its owner built it to: it runs alone, in order.
    # Its result is personal unless the owner marks the server ``shared: true``
    # (`ExtraTool.personal`): a server may answer by who asks.
    "mcp": _personal("calls_mcp"),
}
assert set(HANDLERS) == set(get_args(Handler)), "every handler tools.yml accepts"
BUILTIN_EFFECTS: Mapping[str, Effect] = {name: t.effect for name, t in HANDLERS.items()}

READ_EFFECTS: frozenset[Effect] = frozenset(
    {"reads_workspace", "reads_game", "reads_web", "reads_memory"}
)
"""Effects that change nothing: calls with them may run side by side in one round."""


@dataclass(frozen=True, slots=True)
class ExtraTool:
    """A tool that is not a ``tools.yml`` entry: its own validated entry and code."""

    name: str
    entry: ToolEntry
    run: HandlerFn
    personal: bool = True
    """Whether its result depends on who asks (an MCP server's unless marked ``shared``)."""


class RegistryError(ToolError):
    """Code bound a handler name that is not a built-in (a programming error, not config)."""


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    """One tools.yml entry and what became of it."""

    name: str
    handler: str | None
    status: Status
    permission: str | None
    effect: Effect | None
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True, slots=True)
class BoundTool:
    """A tool a turn may call: its entry, its code and its argument schema, checked and ready
    (``bridge.schemas``: nothing fetched, bounded, RE2 patterns, off the loop when large)."""

    name: str
    entry: ToolEntry
    run: HandlerFn
    schema: SafeSchema
    personal: bool
    """Its result depends on who asks (`HandlerTraits`)."""

    @property
    def effect(self) -> Effect:
        return BUILTIN_EFFECTS[self.entry.handler]


@dataclass(frozen=True, slots=True)
class TurnTools:
    """What one player may use in one turn: the specs for the model and the bound tools;
    ``admit`` is asked again at each call (see ``ToolAdmission``)."""

    specs: tuple[ToolSpec, ...]
    tools: Mapping[str, BoundTool]
    admit: ToolAdmission | None = None


class ToolRegistry:
    """The catalogue built from tools.yml and the handlers this process has code for."""

    def __init__(
        self,
        catalogue: tuple[CatalogueEntry, ...],
        tools: Mapping[str, BoundTool],
        *,
        notes: Mapping[str, str] | None = None,
    ):
        """`notes`: text added to the description of the tools of a handler (by handler name),
        for what only the process knows, such as the Function catalogue behind call_function."""
        self.catalogue = catalogue
        self._tools = dict(tools)
        self._notes = dict(notes or {})

    @classmethod
    def from_tools_file(
        cls,
        tools_file: ToolsFile,
        handlers: Mapping[str, HandlerFn],
        *,
        notes: Mapping[str, str] | None = None,
        extra: Sequence[ExtraTool] = (),
    ) -> ToolRegistry:
        """From the validated ``ToolsFile`` of the published control plane; ``extra``: tools
        that bring their own code (an MCP server's), after the file's, under the same gates."""
        _check_handlers(handlers)
        entries = [(name, entry, ()) for name, entry in tools_file.tools.items()]
        registry = cls._build(entries, handlers, notes=notes)
        for tool in extra:
            if any(entry.name == tool.name for entry in registry.catalogue):
                # tools.yml's entry keeps the name; the other is left out, and said so.
                log.warning(
                    "%s is a tools.yml tool: the MCP tool of that name is left out", tool.name
                )
                continue
            effect = BUILTIN_EFFECTS[tool.entry.handler]
            status: Status = "available" if tool.entry.enabled else "disabled"
            registry.catalogue = (
                *registry.catalogue,
                CatalogueEntry(
                    tool.name, tool.entry.handler, status, tool.entry.permission, effect
                ),
            )
            if tool.entry.enabled:
                schema = SafeSchema.of(tool.entry.parameters)
                registry._tools[tool.name] = BoundTool(
                    tool.name, tool.entry, tool.run, schema, tool.personal
                )
        return registry

    @classmethod
    def from_document(
        cls, document: YamlDocument, handlers: Mapping[str, HandlerFn], *, file: str = "tools.yml"
    ) -> tuple[ToolRegistry, tuple[Problem, ...]]:
        """From raw ``tools.yml``, validating each entry alone: a bad entry is isolated with
        located problems and the others stay usable. Whole-file problems come back separately."""
        _check_handlers(handlers)
        value = document.value
        if not isinstance(value, dict):
            return cls((), {}), (Problem(file, None, None, "", "the file is not a mapping"),)
        file_problems: list[Problem] = []
        if value.get("schema") != 1 or isinstance(value.get("schema"), bool):
            line, column = document.locate(("schema",))
            file_problems.append(Problem(file, line, column, "schema", "must be 1"))
        for key in value:
            if key not in ("schema", "tools"):
                line, column = document.locate((key,))
                file_problems.append(Problem(file, line, column, str(key), "unknown field"))
        tools = value.get("tools", {})
        if not isinstance(tools, dict):
            line, column = document.locate(("tools",))
            file_problems.append(Problem(file, line, column, "tools", "must be a mapping"))
            tools = {}
        entries: list[tuple[str, ToolEntry | None, tuple[Problem, ...]]] = []
        for name, raw in tools.items():
            entries.append(_validate_entry(document, file, str(name), raw))
        return cls._build(entries, handlers), tuple(file_problems)

    @classmethod
    def _build(
        cls,
        entries: Sequence[tuple[str, ToolEntry | None, tuple[Problem, ...]]],
        handlers: Mapping[str, HandlerFn],
        *,
        notes: Mapping[str, str] | None = None,
    ) -> ToolRegistry:
        catalogue: list[CatalogueEntry] = []
        bound: dict[str, BoundTool] = {}
        for name, entry, problems in entries:
            if entry is None:
                catalogue.append(CatalogueEntry(name, None, "invalid", None, None, problems))
                continue
            status: Status = "available"
            if not entry.enabled:
                status = "disabled"
            elif entry.handler not in handlers:
                status = "not_built"
            else:
                schema = SafeSchema.of(entry.parameters)  # accepted by ToolSpec: cached
                personal = HANDLERS[entry.handler].personal
                bound[name] = BoundTool(name, entry, handlers[entry.handler], schema, personal)
            effect = BUILTIN_EFFECTS[entry.handler]
            catalogue.append(
                CatalogueEntry(name, entry.handler, status, entry.permission, effect, problems)
            )
        return cls(tuple(catalogue), bound, notes=notes)

    @property
    def bound(self) -> Mapping[str, BoundTool]:
        """Every tool bound to code, enabled or gated (what a test walks)."""
        return dict(self._tools)

    def for_player(
        self, granted: Collection[str], *, admit: ToolAdmission | None = None
    ) -> TurnTools:
        """The tools a player holding the permission nodes ``granted`` may use, in file order;
        ``admit`` leaves out more (a guest's)."""
        allowed = {
            name: tool
            for name, tool in self._tools.items()
            if (tool.entry.permission is None or tool.entry.permission in granted)
            and (admit is None or admit(name, tool.entry))
        }
        specs = tuple(
            ToolSpec(
                name=name,
                description=self._described(tool.entry),
                parameters=tool.entry.parameters,
            )
            for name, tool in allowed.items()
        )
        return TurnTools(specs=specs, tools=allowed, admit=admit)

    def _described(self, entry: ToolEntry) -> str:
        note = self._notes.get(entry.handler)
        return f"{entry.description.rstrip()}\n\n{note}" if note else entry.description


def _check_handlers(handlers: Mapping[str, HandlerFn]) -> None:
    unknown = sorted(set(handlers) - set(BUILTIN_EFFECTS))
    if unknown:
        raise RegistryError(f"not built-in handlers: {', '.join(unknown)}")


def _validate_entry(
    document: YamlDocument, file: str, name: str, raw: Any
) -> tuple[str, ToolEntry | None, tuple[Problem, ...]]:
    if not TOOL_NAME.fullmatch(name):
        line, column = document.locate(("tools", name))
        message = f"tool name must match {TOOL_NAME.pattern}"
        return name, None, (Problem(file, line, column, f"tools.{name}", message),)
    try:
        return name, ToolEntry.model_validate(raw, strict=True), ()
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_input=True):
            inner = tuple(p for p in error["loc"] if isinstance(p, str | int))
            parts = ("tools", name, *inner)
            line, column = document.locate(parts)
            message = plain_message(ToolEntry, error, inner)
            if error["type"] == "literal_error" and error["loc"][:1] == ("handler",):
                message = "not a built-in handler; tools.yml cannot add one"
            problems.append(Problem(file, line, column, format_path(parts), message))
        return name, None, tuple(problems)
