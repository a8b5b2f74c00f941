"""The command the bridge's lines tell the owner to run is one that runs from where they are:
after `make run` the command sits in .venv/bin, on no shell's PATH."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bridge.cli.invocation import WRAPPER_VARIABLE, command_line, command_name


def _program(folder: Path) -> Path:
    folder.mkdir(parents=True)
    program = folder / "mineclaw-bridge"
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    program.chmod(0o755)
    return program


def test_a_command_not_on_path_is_named_by_the_path_it_was_started_by(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = _program(tmp_path / "my venv" / "bin")
    monkeypatch.delenv(WRAPPER_VARIABLE, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    monkeypatch.setattr(sys, "argv", [str(program), "serve"])
    assert command_name() == f"'{program}'"
    assert command_line("console", "--config", "my config") == (
        f"'{program}' console --config 'my config'"
    )


def test_the_command_path_finds_is_named_plainly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = _program(tmp_path / "bin")
    monkeypatch.delenv(WRAPPER_VARIABLE, raising=False)
    monkeypatch.setenv("PATH", str(program.parent))
    monkeypatch.setattr(sys, "argv", [str(program)])
    assert command_name() == "mineclaw-bridge"


def test_the_checkouts_wrapper_names_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WRAPPER_VARIABLE, "./mineclaw-bridge")
    monkeypatch.setattr(sys, "argv", ["/somewhere/.venv/bin/mineclaw-bridge"])
    assert command_line("validate") == "./mineclaw-bridge validate"


def test_python_dash_m_bridge_keeps_the_commands_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WRAPPER_VARIABLE, raising=False)
    monkeypatch.setattr(sys, "argv", ["/checkout/bridge/__main__.py"])
    assert command_name() == "mineclaw-bridge"
