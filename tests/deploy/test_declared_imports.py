"""Every package the bridge imports is one pyproject.toml declares, not one that happens to be
installed because something else needs it: a transitive dependency can change or leave with
the next release of what brought it (httpcore came with httpx, anyio with httpx and starlette,
referencing with jsonschema, mcp-types with mcp; the bridge imports each of them itself)."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {
        _normal(re.split(r"[<>=!~;\[ ]", line, maxsplit=1)[0]) for line in project["dependencies"]
    }


def _imported() -> dict[str, set[str]]:
    """Top-level modules outside the standard library, each with the files importing it."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "bridge").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != "bridge" and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_package_the_bridge_imports_is_declared() -> None:
    declared = _declared()
    providers = importlib.metadata.packages_distributions()
    imported = _imported()
    assert "httpx" in imported and "lxml" in imported  # the scan reads real imports
    missing = {
        module: sorted(files)
        for module, files in imported.items()
        if not any(_normal(dist) in declared for dist in providers.get(module, [module]))
    }
    assert missing == {}
