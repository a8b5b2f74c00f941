"""Every command block of README.md and docs/install.md marked ``<!-- runnable -->`` runs as
printed, after `make install`, in a fresh folder: ``./mineclaw-bridge`` is the checkout's
wrapper there and a bare ``mineclaw-bridge`` the same command on PATH (an activated venv).

The wrapper runs the venv's command; here that venv is the one running the tests
(MINECLAW_VENV), which in CI is the checkout's own .venv.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = ("README.md", "docs/install.md")
BLOCK = re.compile(
    r"^( *)<!-- runnable -->\n\1```(?:sh|bash)\n(.*?)^\1```$", re.MULTILINE | re.DOTALL
)
TIMEOUT_S = 300  # a hang guard only


def runnable_blocks(text: str) -> list[str]:
    """The blocks after a marker, without the indentation of the list item they sit in."""
    return [textwrap.dedent(match.group(2)) for match in BLOCK.finditer(text)]


def _cases() -> list[object]:
    cases = []
    for name in DOCUMENTS:
        blocks = runnable_blocks((ROOT / name).read_text(encoding="utf-8"))
        assert blocks, f"{name} has no block marked runnable"
        cases += [
            pytest.param(name, index, block, id=f"{name}-{index}")
            for index, block in enumerate(blocks, start=1)
        ]
    return cases


def _run(block: str, folder: Path, venv: Path) -> subprocess.CompletedProcess[str]:
    (folder / "mineclaw-bridge").symlink_to(ROOT / "mineclaw-bridge")
    on_path = folder / "on-path"
    on_path.mkdir()
    (on_path / "mineclaw-bridge").symlink_to(ROOT / "mineclaw-bridge")
    env = {**os.environ, "MINECLAW_VENV": str(venv), "PATH": f"{on_path}:/usr/bin:/bin"}
    env.pop("MINECLAW_COMMAND", None)
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=folder, env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
    )  # fmt: skip


@pytest.mark.parametrize(("document", "index", "block"), _cases())
def test_each_runnable_block_runs_as_printed(
    document: str, index: int, block: str, tmp_path: Path
) -> None:
    done = _run(block, tmp_path, Path(sys.prefix))
    assert done.returncode == 0, f"{document} block {index}:\n{block}\n{done.stdout}{done.stderr}"


def test_a_failing_block_is_caught_and_the_wrapper_says_what_to_run(tmp_path: Path) -> None:
    done = _run("./mineclaw-bridge validate --config nowhere\n", tmp_path, Path(sys.prefix))
    assert done.returncode != 0
    # Without the venv `make install` makes, the wrapper names the step that is missing.
    missing = tmp_path / "second"
    missing.mkdir()
    done = _run("./mineclaw-bridge --version\n", missing, tmp_path / "no-venv")
    assert done.returncode == 1
    assert done.stderr == (
        f"mineclaw-bridge is not installed yet: run 'make install' in {ROOT} "
        f"(it makes {tmp_path / 'no-venv'})\n"
    )


def test_the_markers_find_the_blocks_they_precede() -> None:
    text = "x\n<!-- runnable -->\n```sh\na\nb\n```\n\n```sh\nnot this\n```\n"
    indented = "1. step\n   <!-- runnable -->\n   ```sh\n   c\n   ```\n"
    assert runnable_blocks(text + indented) == ["a\nb\n", "c\n"]
