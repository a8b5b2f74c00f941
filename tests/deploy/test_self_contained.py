"""A clone passes its tests with nothing beside it: every file a test reads is in the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.providers.provider_replay_server import recordings_dir, vectors_dir

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SOURCES = [
    DATA / "provider-recordings" / "pydantic-ai",
    DATA / "provider-recordings" / "llm",
    DATA / "openai-openapi",
]
# A path reaching out of the repository: "../shared", or a "shared" folder joined onto a parent.
OUTSIDE = re.compile(r"""["']\.\./shared|/\s*["']shared["']""")


def test_the_test_data_folder_is_inside_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MINECLAW_VECTORS", raising=False)
    assert vectors_dir().resolve() == DATA
    assert recordings_dir().resolve().is_relative_to(ROOT)
    assert (vectors_dir() / "openai-openapi" / "openapi.yaml").is_file()


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_each_copied_source_carries_its_licence_and_origin(source: Path) -> None:
    assert (source / "LICENSE").is_file(), f"{source}: no LICENSE beside the copied files"
    readme = (source / "README.md").read_text(encoding="utf-8")
    assert re.search(r"Repository: https://github\.com/[\w.-]+/[\w.-]+", readme), readme
    assert re.search(r"Commit: [0-9a-f]{40}\b", readme), f"{source}/README.md names no commit"
    assert "Licence:" in readme


def test_every_recording_a_test_names_is_in_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MINECLAW_VECTORS", raising=False)
    named: set[str] = set()
    for path in [*(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]:
        named |= set(re.findall(r"(?:pydantic-ai|llm)/test_[a-z_]+", path.read_text("utf-8")))
    assert named, "no test names a recording: the pattern above is stale"
    missing = sorted(n for n in named if not (recordings_dir() / f"{n}.yaml").is_file())
    assert not missing, f"recordings named by tests but not in tests/data: {missing}"


def test_no_test_or_benchmark_reads_a_folder_beside_the_repository() -> None:
    offenders = []
    for path in [*(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]:
        if path == Path(__file__).resolve():
            continue
        for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
            if OUTSIDE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "reads outside the repository:\n" + "\n".join(offenders)
