"""The one place tests build the bridge's wheel and install a wheel into a clean virtual
environment, as an owner following docs/install.md would.

"Clean" means what a user starts from: a venv made by the oldest supported Python (3.11, the
``requires-python`` floor) with the pip that Python ships (never upgraded: ``make install``
upgrades pip first, which is how a dependency declared in a spelling the shipped pip does not
match went unseen), the wheel installed with its dependencies from the package index (pip's own
cache reused, so only the first run downloads), and nothing of the checkout importable: its
commands run with no PYTHONPATH, away from the checkout. ``tests/deploy/conftest.py`` makes the
checkout's wheel and its plain install once a run (``wheel``, ``plain_install``);
``install_wheel`` installs another wheel (a release's) the same way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OLDEST_PYTHON = (3, 11)
TIMEOUT_S = 900  # a hang guard only: the first install downloads every dependency


def venv_env() -> dict[str, str]:
    """The environment for the venv's commands: nothing that points at the checkout."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def copy_sources(source: Path) -> None:
    """What a build reads, copied into ``source``: its scratch folders never land in the
    checkout."""
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "bridge", source / "bridge", ignore=shutil.ignore_patterns("__pycache__")
    )


def build_wheel(source: Path, dist: Path) -> Path:
    """The wheel ``python -m build`` makes of a copy of the checkout (no download)."""
    copy_sources(source)
    result = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist)],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    [built] = dist.glob("mineclaw_bridge-*.whl")
    return built


def oldest_python() -> Path:
    """An interpreter of the oldest supported Python: the one under this venv when it is that
    version, else ``python3.11`` on PATH."""
    if sys.version_info[:2] == OLDEST_PYTHON:
        base = Path(sys.base_prefix) / "bin" / "python3.11"
        if base.is_file():
            return base
    found = shutil.which("python3.11")
    if found is None:
        pytest.fail("no Python 3.11 (the oldest supported) to make a clean venv with")
    return Path(found)


@dataclass(frozen=True)
class CleanVenv:
    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    def command(self, name: str) -> Path:
        return self.root / "bin" / name

    def run(self, *argv: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in argv],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            cwd=cwd or self.root,
            env=venv_env(),
        )


def make_clean_venv(root: Path, wheel: Path) -> CleanVenv:
    """A venv of the oldest Python, its own pip as shipped, and ``wheel`` installed into it
    with its dependencies; ``pip check`` finds nothing missing."""
    made = subprocess.run(
        [str(oldest_python()), "-m", "venv", str(root)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=venv_env(),
    )
    assert made.returncode == 0, made.stderr
    venv = CleanVenv(root)
    installed = venv.run(venv.python, "-m", "pip", "install", "--quiet", wheel)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    checked = venv.run(venv.python, "-m", "pip", "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    return venv


def install_wheel(wheel: Path, target: Path) -> Path:
    """A clean venv at ``target`` with ``wheel`` installed; its ``bin`` folder."""
    return make_clean_venv(target, wheel).root / "bin"
