"""The wheel and the clean install of it, each made once a run (``clean_venv.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .clean_venv import CleanVenv, build_wheel, make_clean_venv


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def plain_install(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> CleanVenv:
    """The wheel installed as the docs say, into a clean venv of the oldest Python."""
    return make_clean_venv(tmp_path_factory.mktemp("plain") / "venv", wheel)
