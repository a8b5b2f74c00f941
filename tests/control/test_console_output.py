"""What reaches the console: one warning per start, no raw reprs or library log lines, and
output that does not cut lines when piped. Real processes, so stderr includes C++ logging."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from bridge.control import init_config_dir

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 120  # a hang guard only; the machines are shared


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "OPENAI_API_KEY")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bridge", *argv],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        cwd=REPO,
        env=_env(),
    )


def test_the_missing_key_warning_prints_once_per_start(tmp_path: Path) -> None:
    config = tmp_path / "config"
    init_config_dir(config)
    process = subprocess.Popen(
        [sys.executable, "-m", "bridge", "serve", "--config", str(config), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=REPO,
        env=_env(),
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("link token file:"):
                break
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=TIMEOUT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert err.count("OPENAI_API_KEY") == 1, err
    assert "providers.yml:" in err
    assert "websockets.server" not in err, err


def test_a_bad_grep_pattern_reads_as_text(tmp_path: Path) -> None:
    config = tmp_path / "config"
    init_config_dir(config)
    result = _cli("tools", "call", "grep", "--args", '{"pattern": "(x"}', "--config", str(config))
    assert result.returncode == 1, result
    assert "missing ): (x" in result.stdout
    assert "b'" not in result.stdout
    assert "re2.cc" not in result.stderr and "absl" not in result.stderr, result.stderr


def test_a_bad_whitelist_pattern_adds_no_library_log_line(tmp_path: Path) -> None:
    config = tmp_path / "config"
    init_config_dir(config)
    (config / "whitelist.yml").write_text("schema: 1\nplayer: ['(x', 'y[']\n")
    result = _cli("validate", "--config", str(config))
    assert result.returncode == 1, result
    assert "missing ): (x" in result.stdout and "b'" not in result.stdout
    assert "re2.cc" not in result.stderr and "absl" not in result.stderr, result.stderr


def test_piped_output_keeps_every_line_whole(tmp_path: Path) -> None:
    config = tmp_path / "config"
    init_config_dir(config)
    result = _cli("validate", "--config", str(config))
    assert result.returncode == 0, result
    warning = (
        "${OPENAI_API_KEY} is not set in the environment or .env; "
        "turns using this provider will fail until it is"
    )
    assert any(warning in line for line in result.stdout.splitlines()), result.stdout
    assert "…" not in result.stdout
    result = _cli("tools", "validate", "--config", str(config))
    assert any(
        "runs once the plugin is linked; each command is also decided by whitelist.yml" in line
        for line in result.stdout.splitlines()
    ), result.stdout
