"""The package map of ``docs/architecture.md``, enforced.

Every module under ``bridge/`` is parsed (not imported: importing would hide the imports a
module makes inside functions or under ``TYPE_CHECKING``, and those close cycles just the same).
A package may import its own modules and packages of a lower layer; never one of its own layer
or above. Packages on one layer never import each other, so a cycle between packages is
impossible by the rule, and the cycle check below says which packages close one if the rule
or the allow-list is ever loosened.

Inside ``app`` the same holds one level down: its rooms (``app/serving``, ``app/wiring``,
``app/chat``, ...) are ordered too, a room may import its own modules and lower rooms only, and
no module of ``app`` may close a cycle of imports, not even with a module of its own room.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

BRIDGE = Path(__file__).resolve().parent.parent / "bridge"
ARCHITECTURE = BRIDGE.parent / "docs" / "architecture.md"

# Lower number = lower layer. Keep in step with docs/architecture.md.
LAYERS: dict[str, int] = {
    # The root error types, which every layer may raise.
    "errors": 0,
    # RE2's error wording (imports nothing; the schema door on layer 1 uses it).
    "regex_errors": 0,
    # Shared leaf modules: text and regex helpers every layer may use.
    "unicode_text": 1,
    "redaction": 1,
    "metrics": 1,
    # The bridge's own thread pools (leases, store, budget) and the web lookups' pool.
    "executors": 1,
    # JSON Schemas as data: the one door every schema the bridge validates against goes through.
    "schemas": 1,
    # OS confinement layers a child sets on itself (Function workers, stdio MCP servers).
    "confinement": 1,
    # The verifying TLS context the bridge's HTTP clients share (providers, embeddings).
    "tls_trust": 1,
    # Reads, parses and validates the configuration folder into immutable typed documents.
    "control": 2,
    # The plugin link and persistence: wire and disk, no policy.
    "link": 3,
    "store": 3,
    # Decisions and the provider wire.
    "policy": 4,
    "providers": 4,
    # The web tools' network side: the SSRF shield, fetches, search backends.
    "web": 4,
    # Whether a listen-mode line should start a turn: the contract, the classifier.
    "decisions": 4,
    # Memories over the store: records, the keyword index, recall with the owner as a filter.
    "memory": 4,
    # The history book: a conversation laid out as written-book pages or plain lines.
    "history": 4,
    # A player's several private conversations: ids, titles, the active one, the limit.
    "conversations": 4,
    # Tools the model calls (built-ins and their registry).
    "tools": 5,
    # Owners' Functions and the turn loop, built on the tools.
    "functions": 6,
    "turns": 6,
    # The owner's MCP servers: sessions, discovery and their tools in the registry.
    "mcp": 6,
    # The owner's web console: pages over the stores, reaching the running bridge through a port.
    "console": 7,
    # Wiring: builds what a control-plane version serves and runs it.
    "app": 8,
    # The playground: a simulated server and a scripted model around the wired application.
    "playground": 9,
    # The command line and the entry point.
    "cli": 10,
    "__main__": 11,
}

# The rooms of ``app``, lower number = lower room: a room may import its own modules and the
# rooms below it. Keep in step with docs/architecture.md and ``bridge/app/__init__.py``.
APP_ROOMS: dict[str, int] = {
    # What one control-plane version serves; the bindings from configuration to parts.
    "serving": 0,
    # Per-player state files: conversations, listen opt-outs, persona choices.
    "players": 1,
    # One-off model requests (listen decisions, titles, vectors), through their narrow port.
    "requests": 2,
    # The turn lanes and a turn's output over the link.
    "lanes": 2,
    # The runtime: everything one ``serve`` owns for a server.
    "wiring": 3,
    # ``/mineclaw`` and ``/ai``: one module per command group, and the router.
    "commands": 4,
    # The link handler and the public chat path.
    "chat": 5,
    # Several servers on one bridge, leases, cut turns.
    "network": 6,
    # The console bound to the network.
    "console": 7,
}

# Edges the layers allow but the design does not: building provider client settings from
# control-plane models belongs above ``providers`` (in ``app``), so ``providers`` stays free
# of the configuration files' shapes.
FORBIDDEN: frozenset[tuple[str, str]] = frozenset(
    {("providers", "control"), ("web", "control"), ("memory", "control")}
)

# Imports allowed to break the rules, as (importing module, imported module): none today. Never
# grow it to land a change; move the code instead. An entry no longer needed fails the test, so
# it cannot go stale.
KNOWN_EXCEPTIONS: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True, slots=True)
class Import:
    module: str  # the importing module, dotted
    target: str  # the imported module, dotted
    line: int

    @property
    def source_package(self) -> str:
        return package_of(self.module)

    @property
    def target_package(self) -> str:
        return package_of(self.target)


def package_of(module: str) -> str:
    """``bridge.tools.invoke`` -> ``tools``; ``bridge.errors`` -> ``errors``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(BRIDGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, module: str | None = None) -> Iterator[Import]:
    """Every ``bridge`` import in ``path`` (the module ``module``), wherever it appears."""
    module = module or module_name(path)
    # The package a relative import is resolved against.
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                prefix = ".".join([*base, *([node.module] if node.module else [])])
            else:
                prefix = node.module or ""
            # ``from bridge import errors`` imports the module ``bridge.errors``; a name such
            # as ``__version__`` comes from the root package, which imports nothing.
            targets = [prefix] if prefix != "bridge" else [_from_root(a.name) for a in node.names]
        for target in targets:
            if target.startswith("bridge."):
                yield Import(module, target, node.lineno)


def _from_root(name: str) -> str:
    is_module = (BRIDGE / name).is_dir() or (BRIDGE / f"{name}.py").is_file()
    return f"bridge.{name}" if is_module else "bridge"


def all_imports() -> list[Import]:
    return [found for path in sorted(BRIDGE.rglob("*.py")) for found in imports_of(path)]


def crossing(found: Import) -> bool:
    """An import into another package (within a package anything goes)."""
    return found.source_package != found.target_package and found.source_package != ""


def violations(imports: list[Import]) -> list[str]:
    problems = []
    for found in imports:
        if not crossing(found) or (found.module, found.target) in KNOWN_EXCEPTIONS:
            continue
        source, target = found.source_package, found.target_package
        where = f"{found.module} (line {found.line}) imports {found.target}"
        if source not in LAYERS or target not in LAYERS:
            unknown = source if source not in LAYERS else target
            problems.append(f"{where}: package '{unknown}' has no layer in LAYERS")
        elif LAYERS[target] >= LAYERS[source]:
            problems.append(
                f"{where}: '{source}' (layer {LAYERS[source]}) may not import "
                f"'{target}' (layer {LAYERS[target]})"
            )
        elif (source, target) in FORBIDDEN:
            problems.append(f"{where}: '{source}' may not import '{target}'")
    return problems


def room_of(module: str) -> str:
    """``bridge.app.chat.handler`` -> ``chat``; ``bridge.app`` (the face) -> ``""``."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["bridge", "app"] else ""


def in_app(found: Import) -> bool:
    """An import from one module of ``app`` to another (the face ``bridge.app`` left out)."""
    return (
        found.source_package == "app"
        and found.target_package == "app"
        and room_of(found.module) != ""
        and room_of(found.target) != ""
        and (found.module, found.target) not in KNOWN_EXCEPTIONS
    )


def room_violations(imports: list[Import]) -> list[str]:
    problems = []
    for found in imports:
        if not in_app(found):
            continue
        source, target = room_of(found.module), room_of(found.target)
        if source == target:
            continue
        where = f"{found.module} (line {found.line}) imports {found.target}"
        if source not in APP_ROOMS or target not in APP_ROOMS:
            unknown = source if source not in APP_ROOMS else target
            problems.append(f"{where}: room 'app/{unknown}' has no place in APP_ROOMS")
        elif APP_ROOMS[target] >= APP_ROOMS[source]:
            problems.append(
                f"{where}: room 'app/{source}' ({APP_ROOMS[source]}) may not import "
                f"room 'app/{target}' ({APP_ROOMS[target]})"
            )
    return problems


def package_cycles(imports: list[Import]) -> list[list[str]]:
    """Each cycle of the package graph (allow-listed imports left out), as a list of packages."""
    graph: dict[str, set[str]] = {}
    for found in imports:
        if crossing(found) and (found.module, found.target) not in KNOWN_EXCEPTIONS:
            graph.setdefault(found.source_package, set()).add(found.target_package)
    return cycles_of(graph)


def app_module_cycles(imports: list[Import]) -> list[list[str]]:
    """Each cycle among the modules of ``app``, rooms or not: two modules of one room may import
    each other by the room order, so the order alone cannot keep ``app`` free of circles."""
    graph: dict[str, set[str]] = {}
    for found in imports:
        if in_app(found) and found.module != found.target:
            graph.setdefault(found.module, set()).add(found.target)
    return cycles_of(graph)


def cycles_of(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each cycle a depth-first walk of ``graph`` closes, as the list of its nodes."""
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


def test_the_scan_sees_imports_inside_functions_and_type_checking(tmp_path: Path) -> None:
    """A guard on the scanner itself: a missed import form would make the rules vacuous."""
    sample = tmp_path / "probe.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from bridge.turns.ports import TurnContext\n"
        "def late() -> None:\n"
        "    import bridge.app.wiring.runtime\n"
        "    from ..policy import whitelist\n"
        "    from bridge import cli\n"
        "    from .files import read_regular_file\n",
        encoding="utf-8",
    )
    found = list(imports_of(sample, "bridge.control.probe"))
    assert sorted(i.target for i in found) == [
        "bridge.app.wiring.runtime",
        "bridge.cli",
        "bridge.control.files",
        "bridge.policy",
        "bridge.turns.ports",
    ]
    problems = violations(found)
    assert len(problems) == 4, problems
    assert all(p.startswith("bridge.control.probe (line ") for p in problems)
    assert any("bridge.turns.ports" in p and "'control' (layer 2)" in p for p in problems)


def test_a_cycle_is_named() -> None:
    imports = [
        Import("bridge.store.a", "bridge.link.b", 1),
        Import("bridge.link.b", "bridge.store.a", 2),
    ]
    assert package_cycles(imports) == [["link", "store", "link"]]


def test_an_app_room_importing_a_higher_room_is_named() -> None:
    imports = [
        Import("bridge.app.wiring.runtime", "bridge.app.chat.handler", 7),
        Import("bridge.app.chat.handler", "bridge.app.wiring.runtime", 8),
        Import("bridge.app.chat.handler", "bridge.app.chat.chat", 9),
        Import("bridge.app.attic.box", "bridge.app.serving.served", 10),
    ]
    assert room_violations(imports) == [
        "bridge.app.wiring.runtime (line 7) imports bridge.app.chat.handler: room 'app/wiring' "
        "(3) may not import room 'app/chat' (5)",
        "bridge.app.attic.box (line 10) imports bridge.app.serving.served: room 'app/attic' has "
        "no place in APP_ROOMS",
    ]


def test_a_cycle_inside_app_is_named_even_within_one_room(tmp_path: Path) -> None:
    """The circle runtime -> titles -> runtime once was: an import under ``TYPE_CHECKING`` back
    into the module that builds it. Parsed from source, as the real tree is."""
    runtime = tmp_path / "runtime.py"
    runtime.write_text("from bridge.app.wiring.titles import Titler\n", encoding="utf-8")
    titles = tmp_path / "titles.py"
    titles.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from bridge.app.wiring.runtime import Runtime\n",
        encoding="utf-8",
    )
    imports = [
        *imports_of(runtime, "bridge.app.wiring.runtime"),
        *imports_of(titles, "bridge.app.wiring.titles"),
    ]
    assert room_violations(imports) == []  # one room: the order cannot see it
    assert app_module_cycles(imports) == [
        ["bridge.app.wiring.runtime", "bridge.app.wiring.titles", "bridge.app.wiring.runtime"]
    ]


def house_picture(markdown: str) -> tuple[dict[str, int], dict[str, int]]:
    """The layers and the rooms of ``app`` the picture under "## The house" draws: each layer
    line is ``<number>  <package>  <package> ...``; the rooms hang off ``app`` from the top, one
    line per rank (two rooms on one line share it), so the last line is rank 0."""
    block = markdown.split("## The house", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    layers: dict[str, int] = {}
    room_lines: list[list[str]] = []
    for line in block.splitlines():
        numbered = re.match(r"\s*(\d+)\s+(.*)", line)
        if numbered:
            names = re.split(r"[┬├└]", numbered.group(2))[0].split()
            layers.update((name, int(numbered.group(1))) for name in names)
        rooms = re.findall(r"\bapp/(\w+)", line)
        if rooms:
            room_lines.append(rooms)
    top = len(room_lines) - 1
    return layers, {room: top - i for i, rooms in enumerate(room_lines) for room in rooms}


def test_the_picture_reads_layers_and_rooms() -> None:
    picture = (
        "## The house\n\n```text\n"
        " 8  app ┬ app/wiring    the runtime\n"
        "        ├ app/lanes     lanes     app/requests  requests\n"
        "        └ app/serving   served\n"
        " 3  link  store\n"
        "```\n"
    )
    layers, rooms = house_picture(picture)
    assert layers == {"app": 8, "link": 3, "store": 3}
    assert rooms == {"wiring": 2, "lanes": 1, "requests": 1, "serving": 0}


def test_the_picture_in_architecture_md_is_the_code() -> None:
    """A newcomer finds a room from the picture: every package and room it draws exists, at
    the layer or rank the code keeps, and none is missing from it."""
    layers, rooms = house_picture(ARCHITECTURE.read_text(encoding="utf-8"))
    assert layers == LAYERS
    assert rooms == APP_ROOMS


def test_every_package_has_a_layer() -> None:
    packages = {path.relative_to(BRIDGE).parts[0].removesuffix(".py") for path in BRIDGE.iterdir()}
    packages -= {"__init__", "__pycache__", "py.typed"}
    assert sorted(packages - set(LAYERS)) == []


def test_no_import_from_a_higher_layer() -> None:
    problems = violations(all_imports())
    assert problems == [], "\n".join(problems)


def test_no_cycle_between_packages() -> None:
    cycles = package_cycles(all_imports())
    assert cycles == [], "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_every_app_room_has_a_place() -> None:
    app = BRIDGE / "app"
    rooms = {path.name for path in app.iterdir() if path.is_dir() and path.name != "__pycache__"}
    loose = sorted(path.name for path in app.glob("*.py") if path.name != "__init__.py")
    assert loose == [], "every module of app lives in a room"
    assert sorted(rooms) == sorted(APP_ROOMS)


def test_no_app_room_imports_a_higher_room() -> None:
    problems = room_violations(all_imports())
    assert problems == [], "\n".join(problems)


def test_no_cycle_inside_app() -> None:
    cycles = app_module_cycles(all_imports())
    assert cycles == [], "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_every_known_exception_is_still_needed() -> None:
    """An allow-list entry whose import is gone must be deleted, so the list only shrinks."""
    present = {(i.module, i.target) for i in all_imports()}
    stale = sorted(KNOWN_EXCEPTIONS - present)
    assert stale == [], f"remove from KNOWN_EXCEPTIONS: {stale}"


def test_every_module_imports_first_on_its_own() -> None:
    """A module imported first, in a fresh set of bridge modules, must load: an import cycle that
    the allow-list still permits fails only for the module a process happens to import first."""
    modules = sorted(module_name(path) for path in BRIDGE.rglob("*.py"))
    modules = [m for m in modules if m != "bridge.__main__"]  # runs the CLI when imported
    script = (
        "import importlib, sys\n"
        "failed = []\n"
        f"for name in {modules!r}:\n"
        "    for loaded in [m for m in sys.modules if m == 'bridge' or m.startswith('bridge.')]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        failed.append(f'{name}: {type(exc).__name__}: {exc}')\n"
        "print('\\n'.join(failed))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=BRIDGE.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
