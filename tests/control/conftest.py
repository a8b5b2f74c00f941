from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bridge.cli import main
from bridge.control import init_config_dir


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    """A freshly initialised configuration folder."""
    path = tmp_path / "config"
    init_config_dir(path)
    return path


Cli = Callable[..., tuple[int, str]]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """``main(argv)`` as a command line would run it: the exit code and everything printed.
    Wide output, so table rows stay on one line; no provider key from the machine."""
    monkeypatch.setenv("COLUMNS", "240")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    def run(*argv: str) -> tuple[int, str]:
        code = main(list(argv))
        captured = capsys.readouterr()
        return code, captured.out + captured.err

    return run
