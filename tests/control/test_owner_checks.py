"""What `validate` and friends must catch for a new server owner (issue 16), through `main`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.functions.syntax import check_syntax

from .conftest import Cli

REPO = Path(__file__).resolve().parents[2]


BROKEN_FUNCTION = """\
schema: 1
api_version: 1
functions:
  - name: greet
    description: Say hello.
    enabled: {enabled}
    capabilities: []
    parameters: {{type: object}}
    on_call: |
      async function onCall(ctx, api) {{
        const text = ;
        return {{status: "ok", output: text}};
      }}
"""


def test_a_syntax_error_in_an_enabled_function_fails_validate_at_its_line(
    config_dir: Path, cli: Cli
) -> None:
    (config_dir / "functions.yml").write_text(BROKEN_FUNCTION.format(enabled="true"))
    code, out = cli("validate", "--config", str(config_dir))
    assert code == 1, out
    # `const text = ;` is line 11 of functions.yml, line 2 of the source.
    assert "line 11" in out and "syntax error at line 2" in out and "Unexpected token" in out
    assert "invalid: 1 error(s)" in out
    code, out = cli("functions", "validate", "--config", str(config_dir))
    assert code == 1, out
    assert "functions.yml:11" in out and "syntax error" in out
    assert "invalid" in out


def test_a_syntax_error_in_a_disabled_function_is_a_warning(config_dir: Path, cli: Cli) -> None:
    (config_dir / "functions.yml").write_text(BROKEN_FUNCTION.format(enabled="false"))
    code, out = cli("validate", "--config", str(config_dir))
    assert code == 0, out
    assert "syntax error" in out and "disabled" in out


def test_the_shipped_functions_compile(config_dir: Path, cli: Cli) -> None:
    code, out = cli("functions", "validate", "--config", str(config_dir))
    assert code == 0, out
    assert "syntax error" not in out


@pytest.mark.parametrize(
    "source",
    [
        'throw new Error("the source ran");\nasync function onCall(ctx, api) {}',
        # Written to escape a function wrapper: still compiled only.
        '}); throw new Error("escaped"); (function () {\nasync function onCall() {}',
        "while (true) {}\nasync function onCall(ctx, api) {}",
    ],
)
def test_the_syntax_check_runs_nothing(source: str) -> None:
    error = check_syntax(source)
    if "escaped" in source:
        assert error is not None and "Unexpected token" in error.message
    else:
        assert error is None


def test_a_source_too_deep_to_parse_is_reported_not_a_crash() -> None:
    error = check_syntax("async function onCall() { return " + "[" * 200_000 + "]" * 200_000 + "}")
    assert (
        error is not None and "cannot parse" in error.message and "undefined" not in error.message
    )


def test_the_syntax_check_reads_the_source_as_the_runtime_does() -> None:
    # A top-level return is legal in a function body but not in the script the runtime runs.
    error = check_syntax("return 1;\nasync function onCall(ctx, api) {}")
    assert error is not None and error.line == 1 and "return" in error.message
    unterminated = check_syntax("async function onCall(ctx, api) {\n  return `x;\n}")
    assert unterminated is not None and unterminated.line == 3


@pytest.mark.parametrize(
    ("written", "yaml"),
    [("$OPENAI_API_KEY", "$OPENAI_API_KEY"), ("%OPENAI_API_KEY%", "'%OPENAI_API_KEY%'")],
)
def test_env_references_in_other_forms_are_warned_about(
    config_dir: Path, cli: Cli, written: str, yaml: str
) -> None:
    providers = config_dir / "providers.yml"
    text = providers.read_text()
    assert "${OPENAI_API_KEY}" in text
    providers.write_text(text.replace("${OPENAI_API_KEY}", yaml))
    code, out = cli("validate", "--config", str(config_dir))
    assert code == 0, out
    assert f"{written} is not an environment reference" in out
    assert "write ${OPENAI_API_KEY}" in out


def test_validate_refuses_a_missing_folder_in_one_line(tmp_path: Path, cli: Cli) -> None:
    code, out = cli("validate", "--config", str(tmp_path / "nope"))
    assert code == 2
    assert out.strip().count("\n") == 0, out
    assert "does not exist" in out and " ok" not in out


@pytest.mark.parametrize(
    "argv",
    [
        ("validate",),
        ("functions", "validate"),
        ("tools", "validate"),
        ("whitelist", "check", "--as", "player", "list"),
    ],
)
def test_a_folder_with_none_of_the_files_is_refused(
    tmp_path: Path, cli: Cli, argv: tuple[str, ...]
) -> None:
    (tmp_path / "notes.txt").write_text("not a configuration folder\n")
    code, out = cli(*argv, "--config", str(tmp_path))
    assert code == 2, out
    assert "holds none of the configuration files" in out
    assert "valid" not in out


def test_validate_refuses_the_root_folder(cli: Cli) -> None:
    code, out = cli("validate", "--config", "/")
    assert code == 2 and "holds none of the configuration files" in out


def _serve(config: Path) -> subprocess.CompletedProcess[str]:
    # A separate process: on a folder it wrongly accepts, serve would listen until stopped.
    return subprocess.run(
        [sys.executable, "-m", "bridge", "serve", "--config", str(config), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        cwd=REPO,
    )


def test_serve_does_not_fill_a_mistyped_folder(tmp_path: Path) -> None:
    missing = tmp_path / "mineclaw-confg"
    result = _serve(missing)
    assert result.returncode == 2, result
    assert "does not exist" in result.stderr and "init" in result.stderr
    assert not missing.exists()
    existing = tmp_path / "home"
    existing.mkdir()
    (existing / "notes.txt").write_text("x")
    result = _serve(existing)
    assert result.returncode == 2, result
    assert "holds none of the configuration files" in result.stderr
    assert sorted(os.listdir(existing)) == ["notes.txt"]


def test_init_takes_config_like_every_command(tmp_path: Path, cli: Cli) -> None:
    code, out = cli("init", "--config", str(tmp_path / "cfg"))
    assert code == 0 and (tmp_path / "cfg" / "config.yml").is_file(), out
    code, out = cli("init", str(tmp_path / "a"), "--config", str(tmp_path / "b"))
    assert code == 2 and "give one" in out


def test_tools_validate_says_what_it_checks_offline_and_what_waits_for_the_link(
    config_dir: Path, cli: Cli
) -> None:
    code, out = cli("tools", "validate", "--config", str(config_dir))
    assert code == 0, out
    for unfinished in ("not_built", "not built", "not wired"):
        assert unfinished not in out
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 3}
    assert "ok" in rows["run_command"] and "once the plugin is linked" in rows["run_command"]
    assert "ok" in rows["read"] and "offline" in rows["read"]
    assert "Checked here:" in out and "Checked once the plugin is linked" in out


def test_an_unknown_handler_exits_1_in_both_validate_commands(config_dir: Path, cli: Cli) -> None:
    tools = config_dir / "tools.yml"
    tools.write_text(
        tools.read_text() + "  shell:\n    handler: shell\n    description: x\n"
        "    parameters: {type: object}\n"
    )
    code, out = cli("validate", "--config", str(config_dir))
    assert code == 1, out
    code, out = cli("tools", "validate", "--config", str(config_dir))
    assert code == 1, out


def test_whitelist_check_uses_the_built_in_default_like_the_bridge(
    config_dir: Path, cli: Cli
) -> None:
    (config_dir / "whitelist.yml").unlink()
    code, out = cli("whitelist", "check", "--as", "player", "list", "--config", str(config_dir))
    assert code in (0, 1) and "canonical: list" in out, out


MCP_CONFIG = """\
schema: 1
mcp:
  enabled: true
  servers:
    wiki:
      transport: stdio
      command: {command}
{more}"""


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("no-such-mcp-server-9f2e", "'no-such-mcp-server-9f2e' is not a program on PATH"),
        ("./servers/wiki.js", "'./servers/wiki.js' is not an executable file"),
        ("/nonexistent/bin/wiki-mcp", "'/nonexistent/bin/wiki-mcp' is not an executable file"),
    ],
)
def test_an_mcp_command_that_is_no_program_fails_validate_at_its_line(
    config_dir: Path, cli: Cli, command: str, said: str
) -> None:
    more = "      permission: mineclaw.tool.wiki\n"
    (config_dir / "config.yml").write_text(MCP_CONFIG.format(command=command, more=more))
    code, out = cli("validate", "--config", str(config_dir))
    assert code == 1, out
    assert "line 7" in out and "mcp.servers.wiki.command" in out and said in out, out


def test_an_mcp_server_whose_tools_reach_plain_players_is_warned_about(
    config_dir: Path, cli: Cli
) -> None:
    cases = {
        "": True,
        "      tools: {run_console: {permission: mineclaw.tool.admin}}\n": True,  # unlisted: review
        "      permission: mineclaw.tool.wiki\n": False,
        "      unlisted: refuse\n      tools: {search: {permission: mineclaw.tool.wiki}}\n": False,
    }
    for more, warned in cases.items():
        text = MCP_CONFIG.format(command=sys.executable, more=more)
        (config_dir / "config.yml").write_text(text)
        code, out = cli("validate", "--config", str(config_dir))
        assert code == 0, out
        assert ("MCP server wiki has no permission" in out) is warned, (more, out)
        if warned:
            assert "line 5" in out and "warning" in out
