"""Sentences in the install guide that name what the plugin prints or does, against the code."""

from __future__ import annotations

import re
from pathlib import Path

from bridge.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "docs" / "install.md"
JAVA_MAIN = sorted(ROOT.glob("plugin-java/*/src/main/java/**/*.java"))
# The lines the plugin logs when the link cannot be made or is lost; an owner looking one up in
# the troubleshooting table must find it there.
LINK_LOG_LINES = ("link: cannot connect to ", "bridge link down: ", "closed by the bridge (")


def _section(title: str) -> str:
    return INSTALL.read_text(encoding="utf-8").split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def _java_literals() -> list[str]:
    literals: list[str] = []
    for path in JAVA_MAIN:
        literals += re.findall(r'"((?:[^"\\\n]|\\.)*)"', path.read_text(encoding="utf-8"))
    return literals


def test_every_link_log_line_is_in_the_troubleshooting_table() -> None:
    literals = _java_literals()
    table = _section("Troubleshooting")
    for line in LINK_LOG_LINES:
        assert any(lit.startswith(line) for lit in literals), f"the plugin no longer logs {line!r}"
        assert f"`{line}" in table or f": {line}" in table, f"troubleshooting lacks {line!r}"


def test_each_plugin_line_in_the_table_starts_as_the_plugin_writes_it() -> None:
    literals = _java_literals()
    rows = re.findall(r"^\| plugin: `([^`]+)`", _section("Troubleshooting"), re.MULTILINE)
    assert rows
    for row in rows:
        start = re.split(r"\.\.\.|<", row, maxsplit=1)[0]
        # A line may also open with a constant, as "plugin-link.yml" + ": " + key does.
        assert any(
            lit.startswith(start) or (len(lit) >= 8 and start.startswith(lit + ": "))
            for lit in literals
        ), (
            f"docs/install.md troubleshooting shows {row!r}; the plugin logs no line starting "
            f"{start!r}"
        )


def test_the_ai_prefix_is_promised_only_for_listen_mode() -> None:
    # The plugin prefixes a line only when the verdict says ai_prefix, which the bridge sets
    # for implicit wakes in listen mode, never for an explicit @ai.
    for paragraph in INSTALL.read_text(encoding="utf-8").split("\n\n"):
        if "`[AI]`" in paragraph and "@ai" in paragraph:
            assert "listen mode" in paragraph, paragraph


def test_the_systemd_unit_runs_serve_as_the_cli_accepts_it() -> None:
    text = _section("On a plain server")
    [unit] = re.findall(r"```ini\n(.*?)```", text, re.DOTALL)
    settings = dict(
        line.split("=", 1) for line in unit.splitlines() if "=" in line and not line.startswith("#")
    )
    assert settings["User"] and settings["Restart"] == "on-failure"
    assert settings["WantedBy"] == "multi-user.target"
    words = settings["ExecStart"].split()
    assert words[0].endswith("/mineclaw-bridge") and words[1] == "serve"
    args = build_parser().parse_args(words[1:])
    assert args.handler.__name__ == "run_serve" and str(args.config) in settings["ReadWritePaths"]
    # The exit codes the unit does not restart on are the README's "needs the owner" codes.
    assert settings["RestartPreventExitStatus"].split() == ["1", "2"]


def test_the_readmes_documentation_table_names_each_page_once() -> None:
    # docs/operations.md had two rows that said different things about one page.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Documentation", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"^\| `(docs/[^`]+)` \|", table, re.MULTILINE)
    pages = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))
    assert sorted(named) == pages
