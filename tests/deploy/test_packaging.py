"""The bridge as a normal Python package: the wheel `python -m build` makes holds the command,
the package and every shipped default file, and works installed on its own."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from .clean_venv import copy_sources

ROOT = Path(__file__).resolve().parents[2]
CONSOLE = ROOT / "bridge" / "console"
DEFAULTS = ROOT / "bridge" / "control" / "defaults"
TIMEOUT_S = 600  # a hang guard only
# The wheel is the session fixture of conftest.py, built by clean_venv.py.


def test_the_wheel_holds_the_package_the_command_and_every_default(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        scripts = archive.read(entry_points).decode()
    assert "mineclaw-bridge = bridge.cli:main" in scripts
    shipped = {
        str(path.relative_to(ROOT))
        for path in DEFAULTS.rglob("*")
        if path.is_file() and path.suffix != ".pyc"
    }
    assert shipped and not shipped - names, f"defaults missing from the wheel: {shipped - names}"
    assert "bridge/cli/__init__.py" in names
    # The console's templates, scripts, styles and the vendored charting library with its licence.
    console = {
        str(path.relative_to(ROOT))
        for folder in (CONSOLE / "templates", CONSOLE / "static")
        for path in folder.rglob("*")
        if path.is_file()
    }
    assert console and not console - names, f"console files missing: {console - names}"
    assert "bridge/console/static/vendor/uplot/LICENSE" in names
    assert not any(name.startswith(("tests/", "bench/")) for name in names)


def test_the_installed_wheel_writes_and_validates_a_configuration(
    wheel: Path, tmp_path: Path
) -> None:
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
        + ["--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert install.returncode == 0, install.stderr
    command = target / "bin" / "mineclaw-bridge"
    assert command.is_file()
    # Only the installed copy of the package may be found: not the checkout's.
    env = {**os.environ, "PYTHONPATH": str(target)}
    config = tmp_path / "config"
    for argv in (["init", str(config)], ["validate", "--config", str(config)]):
        result = subprocess.run(
            [sys.executable, str(command), *argv],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            cwd=tmp_path,
            env=env,
        )
        assert result.returncode == 0, result.stdout + result.stderr
    for path in DEFAULTS.rglob("*"):
        if path.is_file() and path.suffix not in (".py", ".pyc"):
            written = config / path.relative_to(DEFAULTS)
            assert written.read_bytes() == path.read_bytes(), written
    where = subprocess.run(
        [sys.executable, "-c", "import bridge; print(bridge.__file__)"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        cwd=tmp_path,
        env=env,
    )
    assert Path(where.stdout.strip()).is_relative_to(target), where


def test_an_editable_install_as_make_install_does_warns_of_nothing(tmp_path: Path) -> None:
    """`make install` is `pip install -e`: pip shows the build backend's warnings (not its
    log lines), and a warning there reads like a broken install to a new user. The backend's
    editable build is run here directly (nothing is installed) with every warning an error."""
    source = tmp_path / "source"
    source.mkdir()
    copy_sources(source)
    (tmp_path / "out").mkdir()
    build = "import setuptools.build_meta as backend, sys; backend.build_editable(sys.argv[1])"
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", build, str(tmp_path / "out")],
        cwd=source, capture_output=True, text=True, timeout=TIMEOUT_S,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert list((tmp_path / "out").glob("mineclaw_bridge-*.whl"))
