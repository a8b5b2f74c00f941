"""A virtual environment of its own with one built wheel installed, as an owner's would be.

Only the wheel's copy of the bridge is importable there: the venv does not see the checkout
(its commands run with no PYTHONPATH, away from the checkout). The tests never reach a package
index, so the wheel's dependencies are not downloaded: the venv reads them from the site-packages
of the Python running the tests, appended after its own (a path in a .pth file; that folder's own
.pth files, among them the checkout's editable install, are not processed).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

TIMEOUT_S = 600  # a hang guard only


def venv_env() -> dict[str, str]:
    """The environment for the venv's commands: nothing that points at the checkout."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


def install_wheel(wheel: Path, target: Path) -> Path:
    """A new venv at ``target`` with ``wheel`` installed; its ``bin`` folder."""
    venv.create(target, with_pip=False, symlinks=True)
    python = target / "bin" / "python"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
        + ["--no-deps", "--no-index", str(wheel)],
        capture_output=True, text=True, timeout=TIMEOUT_S, env=venv_env(),
    )  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, timeout=TIMEOUT_S, env=venv_env(), check=True,
    ).stdout.strip()  # fmt: skip
    dependencies = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "_test_dependencies.pth").write_text(dependencies + "\n", encoding="utf-8")
    return target / "bin"
