"""``tools validate`` and ``tools call`` through the real entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.cli import main
from bridge.control import init_config_dir

from .conftest import OUTSIDE_SECRET

CONFIGURED = "configured-secret-value-42"


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "240")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    path = tmp_path / "config"
    init_config_dir(path)
    with (path / ".env").open("a") as env:
        env.write(f"RCON_PASSWORD={CONFIGURED}\n")
    (path / "workspace" / "notes.txt").write_text(
        f"rcon is {CONFIGURED}\nGH=ghp_{'x' * 36}\nplain line\n"
    )
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_validate_lists_every_tool_with_its_status(
    config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "tools", "validate", "--config", str(config_dir))
    assert code == 0
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 3}
    assert "offline" in rows["read"] and "offline" in rows["grep"]
    assert "linked" in rows["run_command"] and "mineclaw.tool.run_command" in rows["run_command"]
    assert (
        "valid: 19 ok (4 run offline, 11 once the plugin is linked, 2 with web.enabled, "
        "2 with memory.enabled), 0 disabled, 0 invalid" in out
    )


def test_validate_isolates_a_bad_entry(
    config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = config_dir / "tools.yml"
    tools.write_text(
        tools.read_text() + "  shell:\n    handler: shell\n    description: x\n"
        "    parameters: {type: object}\n"
    )
    code, out, _ = run(capsys, "tools", "validate", "--config", str(config_dir))
    assert code == 1
    assert "tools.yml cannot add one" in out
    assert (
        "ok (4 run offline, 11 once the plugin is linked, 2 with web.enabled, 2 with"
        " memory.enabled), 0 disabled, 1 invalid" in out
    )


def test_validate_reports_unreadable_yaml(
    config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (config_dir / "tools.yml").write_text("schema: 1\ntools: {a: [\n")
    code, out, _ = run(capsys, "tools", "validate", "--config", str(config_dir))
    assert code == 1 and "tools.yml" in out


def test_call_read_prints_the_redacted_json_result(
    config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys,
        "tools",
        "call",
        "read",
        "--args",
        '{"path": "notes.txt"}',
        "--config",
        str(config_dir),
    )
    assert code == 0
    result = json.loads(out)
    assert result["ok"] is True
    assert result["result"]["text"] == (
        "rcon is [redacted: configured secret]\nGH=[redacted: github token]\nplain line\n"
    )


def test_call_grep_and_list(config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "tools",
        "call",
        "grep",
        "--args",
        '{"pattern": "^plain line$"}',
        "--config",
        str(config_dir),
    )
    assert code == 0
    assert json.loads(out)["result"]["matches"] == [
        {"path": "notes.txt", "line": 3, "text": "plain line"}
    ]
    code, out, _ = run(capsys, "tools", "call", "list", "--config", str(config_dir))
    assert code == 0
    assert {"path": "AGENTS.md", "type": "file"}.items() <= json.loads(out)["result"]["entries"][
        0
    ].items()


@pytest.mark.parametrize(
    ("arguments", "code_text"),
    [
        ('{"path": "../.env"}', "path_refused"),
        ('{"path": "/etc/passwd"}', "path_refused"),
        ('{"path": "missing.txt"}', "not_found"),
        ('{"nope": 1}', "invalid_arguments"),
        ("not json", "invalid_arguments"),
    ],
)
def test_call_errors_are_json_results_with_exit_1(
    config_dir: Path, capsys: pytest.CaptureFixture[str], arguments: str, code_text: str
) -> None:
    code, out, _ = run(
        capsys, "tools", "call", "read", "--args", arguments, "--config", str(config_dir)
    )
    assert code == 1
    assert json.loads(out)["error_code"] == code_text
    assert CONFIGURED not in out and OUTSIDE_SECRET not in out


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("run_command", "only list, read, grep and read_skill run offline"),
        ("player_snapshot", "only list, read, grep and read_skill run offline"),
        ("rm", "no tool named 'rm'"),
    ],
)
def test_call_refuses_tools_that_cannot_run_offline(
    config_dir: Path, capsys: pytest.CaptureFixture[str], name: str, message: str
) -> None:
    code, out, err = run(capsys, "tools", "call", name, "--config", str(config_dir))
    assert code == 2 and message in err and out == ""


def test_call_refuses_a_disabled_tool(config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = config_dir / "tools.yml"
    tools.write_text(
        tools.read_text().replace("    handler: grep\n", "    handler: grep\n    enabled: false\n")
    )
    code, _, err = run(
        capsys, "tools", "call", "grep", "--args", '{"pattern": "x"}', "--config", str(config_dir)
    )
    assert code == 2 and "disabled" in err


def test_call_with_a_broken_configuration_says_why(
    config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (config_dir / "config.yml").write_text("schema: 1\nworkspace: {max_depth: 0}\n")
    code, _, err = run(capsys, "tools", "call", "list", "--config", str(config_dir))
    assert code == 1 and "config.yml" in err and "max_depth" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["tools", "call", "read", "--args", '{"path": "big.md"}'],
        ["validate"],
        ["tools", "validate"],
        ["--help"],
    ],
)
def test_a_reader_that_closes_the_pipe_gets_no_traceback(config_dir: Path, argv: list[str]) -> None:
    # `mineclaw-bridge tools call ... | head` ended in a BrokenPipeError traceback. The read
    # end is closed before the command writes, so every write meets a closed pipe.
    (config_dir / "workspace" / "big.md").write_text("a line of the file\n" * 3000)
    if argv != ["--help"]:
        argv = [*argv, "--config", str(config_dir)]
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bridge", *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stderr
