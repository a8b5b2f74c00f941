"""No module of logic in ``bridge/`` over `MAX_LINES` lines: a module that long holds more than
one idea, and a newcomer reads it as a wall. A module past the bound is split into modules whose
names say what each holds; it is never listed here to land a change.

Declarative modules, whose length is a list of shapes with no logic between them, are the only
exceptions, each named with why. An exception that is no longer needed fails the test, so the
list only shrinks.
"""

from __future__ import annotations

from pathlib import Path

BRIDGE = Path(__file__).resolve().parent.parent / "bridge"

MAX_LINES = 600

DECLARATIVE: dict[str, str] = {
    "link/messages.py": "the link protocol's wire types: one pydantic model per frame",
}


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def too_long(root: Path, exceptions: dict[str, str]) -> list[str]:
    """Each module under ``root`` over `MAX_LINES` lines and not an exception, with its length."""
    found = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        lines = line_count(path)
        if lines > MAX_LINES and name not in exceptions:
            found.append(f"{name}: {lines} lines (at most {MAX_LINES})")
    return found


def test_a_long_module_is_named(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "short.py").write_text("x = 1\n" * MAX_LINES, encoding="utf-8")
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    (tmp_path / "wire.py").write_text("x = 1\n" * (MAX_LINES + 5), encoding="utf-8")
    assert too_long(tmp_path, {"wire.py": "shapes"}) == [
        f"pkg/long.py: {MAX_LINES + 1} lines (at most {MAX_LINES})"
    ]


def test_no_module_of_logic_is_over_the_bound() -> None:
    problems = too_long(BRIDGE, DECLARATIVE)
    assert problems == [], "split these into named modules:\n" + "\n".join(problems)


def test_every_declarative_exception_is_still_needed() -> None:
    stale = sorted(name for name in DECLARATIVE if line_count(BRIDGE / name) <= MAX_LINES)
    assert stale == [], f"remove from DECLARATIVE: {stale}"
