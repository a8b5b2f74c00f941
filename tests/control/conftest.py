from __future__ import annotations

from pathlib import Path

import pytest

from bridge.control import init_config_dir


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    """A freshly initialised configuration folder."""
    path = tmp_path / "config"
    init_config_dir(path)
    return path
