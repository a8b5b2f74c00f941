"""The never list: which command, by its spelling and by what the server resolves it to, no
confirmation can pass and no rule reaches without ``allow_never``.

A command is judged with every command it carries (``bridge.policy.nested_commands``). Each
one is looked up by its label's spelling (namespace dropped: ``essentials:esudo`` is
``esudo``) and, when the server resolved the label, by the command's real name, every alias,
its owning plugin and its permission node; ``<command> <first argument>`` pairs catch
subcommands (``cmi sudo``), and command block ids the carriers of command blocks. The label
must be known to the server: an unknown label, or an alias the server defines as a script of
other commands, is refused rather than dispatched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bridge.control.never_categories import NeverCategory
from bridge.policy.nested_commands import Carried, UncertainCommand, carried_commands, label_of


@dataclass(frozen=True, slots=True)
class CommandIdentity:
    """What the server's command map says about one label (``command.resolve``).

    ``known`` false: no command has that label. ``script``: a ``commands.yml`` alias that runs
    other command lines, which cannot be judged. ``plugin`` is the owning plugin's name, or
    ``minecraft``/``bukkit`` for the server's own commands.
    """

    label: str
    known: bool
    name: str | None = None
    plugin: str | None = None
    aliases: tuple[str, ...] = ()
    permission: str | None = None
    script: bool = False

    def describe(self) -> str:
        if not self.known:
            return f"{self.label}: unknown to the server"
        parts = [f"{self.label} -> {self.name}"]
        if self.plugin:
            parts.append(f"of {self.plugin}")
        if self.aliases:
            parts.append(f"aliases {', '.join(self.aliases)}")
        parts.append(f"permission {self.permission or '(none)'}")
        if self.script:
            parts.append("a commands.yml alias script")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class NeverHit:
    """One carried ``command`` is in ``category`` because of ``why`` (the matching entry)."""

    command: str
    category: str
    description: str
    why: str

    def reason(self) -> str:
        return (
            f"'{_short(self.command)}' is on the server's never list ({self.category}:"
            f" {self.description}; {self.why})"
        )


@dataclass(frozen=True, slots=True)
class Judgement:
    """The never-list view of one canonical command.

    ``uncertain``: what it carries could not be told (then nothing else was judged);
    ``unknown``: labels the server does not know or cannot say what they run; ``hits``: never
    entries it matches; ``resolved`` is False when no server was asked (offline checks).
    """

    canonical: str
    commands: tuple[str, ...]
    identities: tuple[CommandIdentity | None, ...]
    hits: tuple[NeverHit, ...]
    unknown: tuple[str, ...]
    uncertain: str | None
    resolved: bool

    def refusal(self, *, allow_never: bool = False) -> str | None:
        """Why the command may not run, or None; ``allow_never`` lets never entries pass (a
        rule's explicit opt-out), never an unknown label or an unreadable carrier."""
        if self.uncertain is not None:
            return f"the bridge cannot tell with certainty what the command runs: {self.uncertain}"
        if self.hits and not allow_never:
            return self.hits[0].reason()
        if self.unknown:
            return self.unknown[0]
        return None


class NeverList:
    """The compiled categories; immutable."""

    def __init__(self, categories: Mapping[str, NeverCategory]) -> None:
        self.categories = dict(categories)
        self._commands: dict[str, str] = {}
        self._subcommands: dict[str, str] = {}
        self._plugins: dict[str, str] = {}
        self._nodes: dict[str, str] = {}
        self._subtrees: dict[str, str] = {}
        self._items: dict[str, str] = {}
        for name, category in self.categories.items():
            for command in category.commands:
                self._commands.setdefault(command, name)
            for pair in category.subcommands:
                self._subcommands.setdefault(pair, name)
            for plugin in category.plugins:
                self._plugins.setdefault(plugin.lower(), name)
            for node in category.permissions:
                if node.endswith(".*"):
                    self._subtrees.setdefault(node[:-1], name)
                else:
                    self._nodes.setdefault(node, name)
            for item in category.items:
                self._items.setdefault(item, name)

    @property
    def command_names(self) -> frozenset[str]:
        return frozenset(self._commands)

    @property
    def subcommand_pairs(self) -> frozenset[str]:
        return frozenset(self._subcommands)

    @property
    def item_ids(self) -> frozenset[str]:
        return frozenset(self._items)

    def labels(self, canonical: str) -> tuple[str, ...]:
        """The labels to resolve for ``canonical``: its own and those of every command it
        carries. Raises ``UncertainCommand`` when what it carries cannot be told."""
        carried = carried_commands(canonical)
        return tuple(dict.fromkeys(label_of(command) for command in carried.commands))

    def judge(self, canonical: str, resolved: Mapping[str, CommandIdentity] | None) -> Judgement:
        """Judge ``canonical`` and all it carries; ``resolved`` maps each label to the
        server's answer, or is None when no server could be asked (spelling only)."""
        try:
            carried = carried_commands(canonical)
        except UncertainCommand as exc:
            return Judgement(canonical, (canonical,), (None,), (), (), exc.reason, False)
        hits: list[NeverHit] = []
        unknown: list[str] = []
        identities: list[CommandIdentity | None] = []
        for command in carried.commands:
            label = label_of(command)
            identity = None if resolved is None else resolved.get(label)
            identities.append(identity)
            if resolved is not None:
                problem = _unresolved(command, label, identity, carried)
                if problem is not None:
                    unknown.append(problem)
            hits.extend(self._hits(command, identity))
        for block in carried.command_blocks:
            category = self._items.get(block)
            if category is not None:
                hits.append(self._hit(canonical, category, f"it holds {block}"))
        return Judgement(
            canonical,
            carried.commands,
            tuple(identities),
            tuple(hits),
            tuple(unknown),
            None,
            resolved is not None,
        )

    def _hits(self, command: str, identity: CommandIdentity | None) -> list[NeverHit]:
        words = command.split(" ")
        spelled = words[0].lower().rpartition(":")[2].lstrip("/")
        first = words[1].lower() if len(words) > 1 else None
        names: dict[str, str] = {spelled: "spelled"}
        if identity is not None and identity.known:
            for name in (identity.name or "", *identity.aliases):
                bare = name.lower().rpartition(":")[2]
                if bare:
                    names.setdefault(bare, f"the server resolves it to {identity.name}")
        hits: list[NeverHit] = []
        for name, source in names.items():
            category = self._commands.get(name)
            if category is not None:
                hits.append(self._hit(command, category, _because(name, source)))
            if first is not None and (category := self._subcommands.get(f"{name} {first}")):
                hits.append(self._hit(command, category, _because(f"{name} {first}", source)))
        for word in words[1:]:  # a command spelled inside another one: /op, minecraft:op
            lowered = word.lower()
            inner = lowered[1:] if lowered.startswith("/") else lowered.rpartition(":")[2]
            carried = lowered.startswith("/") or ":" in lowered
            if carried and inner and (category := self._commands.get(inner)):
                hits.append(self._hit(command, category, f"it names the command {word}"))
        if identity is not None and identity.known:
            plugin = (identity.plugin or "").lower()
            if category := self._plugins.get(plugin):
                hits.append(self._hit(command, category, f"{identity.plugin} owns it"))
            for node in (identity.permission or "").split(";"):
                if category := self._node(node.strip().lower()):
                    hits.append(self._hit(command, category, f"its permission is {node}"))
        return hits

    def _node(self, node: str) -> str | None:
        if not node:
            return None
        if node in self._nodes:
            return self._nodes[node]
        for prefix, category in self._subtrees.items():
            if node.startswith(prefix) or node == prefix[:-1]:
                return category
        return None

    def _hit(self, command: str, category: str, why: str) -> NeverHit:
        description = self.categories[category].description
        return NeverHit(command, category, description, why)


def _because(name: str, source: str) -> str:
    return f"it is {name}" if source == "spelled" else f"{source}, listed as {name}"


def _unresolved(
    command: str, label: str, identity: CommandIdentity | None, carried: Carried
) -> str | None:
    outer = carried.commands[0]
    where = "" if command == outer else f" (carried in '{_short(outer)}')"
    if identity is None or not identity.known:
        return f"the server has no command '{label}'{where}, so it was not sent"
    if identity.script:
        return (
            f"'{label}' is an alias the server defines as other commands (commands.yml){where},"
            " which the bridge cannot judge"
        )
    return None


def _short(command: str) -> str:
    return command if len(command) <= 80 else command[:77] + "..."
