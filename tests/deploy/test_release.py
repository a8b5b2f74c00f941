"""`make release` (release/build.py): what a tag's release holds, that two builds of one tag are
byte-identical, and that the released wheel and jar run: the wheel installed into a venv of its
own writes, validates and serves a configuration that the released jar's plugin core links to.

The release is built from a git repository made for the test from the checkout's files (with
what is not committed yet), tagged v9.8.7: a version nothing else has, so the test sees it
came from the tag. Both builds are shared by every test here (session scope).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from release.build import PACKAGED, ReleaseError, changelog_section, plugin_wheel, tagged_version

from .clean_venv import install_wheel, venv_env

ROOT = Path(__file__).resolve().parents[2]
VERSION = "9.8.7"
COMMIT_TIME = "1796400000"  # 2026-12-04 16:00 UTC: the time every archive entry must carry
M2_PAPER = Path.home() / ".m2/repository/io/papermc/paper/paper-api/1.21.4-R0.1-SNAPSHOT"
JAVA_HOME = os.environ.get("JAVA25_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")
TIMEOUT_S = 900  # a hang guard only
SECTION = f"## [{VERSION}]\n\n- What the test's release changed.\n\n"


def _git(repo: Path, *args: str) -> str:
    stamp = {"GIT_AUTHOR_DATE": f"@{COMMIT_TIME}", "GIT_COMMITTER_DATE": f"@{COMMIT_TIME}"}
    result = subprocess.run(
        ["git", "-c", "user.name=test", "-c", "user.email=test@localhost", *args],
        cwd=repo, capture_output=True, text=True, timeout=TIMEOUT_S,
        env={**os.environ, **stamp},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def _tagged_repository(target: Path, tag: str | None, section: str = SECTION) -> Path:
    """The checkout's files (tracked and new, not ignored) in a new repository, one commit."""
    listed = _git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    changelog = target / "CHANGELOG.md"
    text = changelog.read_text(encoding="utf-8")
    changelog.write_text(text.replace("## [Unreleased]", section + "## [Unreleased]", 1))
    _git(target, "init", "-q")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "the release under test")
    if tag:
        _git(target, "tag", tag)
    return target


def _build(repo: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "release/build.py", "--out", str(out), *extra],
        cwd=repo, capture_output=True, text=True, timeout=TIMEOUT_S,
        env={**venv_env(), "JAVA_HOME": JAVA_HOME},
    )  # fmt: skip


@dataclass(frozen=True)
class Builds:
    first: Path
    second: Path


@pytest.fixture(scope="session")
def builds(tmp_path_factory: pytest.TempPathFactory) -> Builds:
    if not M2_PAPER.is_dir():
        pytest.fail(f"paper-api is not in the local Maven repository ({M2_PAPER}): make java")
    repo = _tagged_repository(tmp_path_factory.mktemp("repo"), f"v{VERSION}")
    first, second = tmp_path_factory.mktemp("first"), tmp_path_factory.mktemp("second")
    made = _build(repo, first)
    assert made.returncode == 0, made.stdout + made.stderr
    # The link check reads the jar and changes nothing: the second build skips it.
    again = _build(repo, second, "--no-linkcheck")
    assert again.returncode == 0, again.stdout + again.stderr
    return Builds(first, second)


def _named(folder: Path) -> dict[str, Path]:
    return {path.name: path for path in folder.iterdir()}


def test_two_builds_of_one_tag_are_byte_identical(builds: Builds) -> None:
    first, second = _named(builds.first), _named(builds.second)
    assert sorted(first) == sorted(second)
    different = [name for name in first if first[name].read_bytes() != second[name].read_bytes()]
    assert different == []


def test_the_release_holds_the_tagged_version_sums_notes_and_notices(builds: Builds) -> None:
    files = _named(builds.first)
    jar, wheel = f"Mineclaw-{VERSION}.jar", f"mineclaw_bridge-{VERSION}-py3-none-any.whl"
    sdist = f"mineclaw_bridge-{VERSION}.tar.gz"
    notes = f"CHANGES-{VERSION}.md"
    assert sorted(files) == sorted([jar, wheel, sdist, notes, "LICENSE", "NOTICE", "SHA256SUMS"])
    sums = {}
    for line in files["SHA256SUMS"].read_text(encoding="utf-8").splitlines():
        digest, name = line.split("  ")
        sums[name] = digest
    assert sums == {
        name: hashlib.sha256(path.read_bytes()).hexdigest()
        for name, path in files.items()
        if name != "SHA256SUMS"
    }
    assert files[notes].read_text(encoding="utf-8") == SECTION.rstrip("\n") + "\n"
    with zipfile.ZipFile(files[jar]) as plugin:
        descriptor = yaml.safe_load(plugin.read("plugin.yml"))
        assert descriptor["version"] == VERSION
        assert plugin.read("META-INF/NOTICE") == (ROOT / "NOTICE").read_bytes()
        assert plugin.read("META-INF/LICENSE") == (ROOT / "LICENSE").read_bytes()
        # bridge.managed installs the wheel the jar carries: the released one, byte for byte.
        assert plugin.read("mineclaw-bridge/wheel.txt") == f"{wheel}\n".encode()
        assert plugin.read(f"mineclaw-bridge/{wheel}") == files[wheel].read_bytes()
        stamps = {entry.date_time for entry in plugin.infolist()}
    with zipfile.ZipFile(files[wheel]) as bridge:
        metadata = bridge.read(f"mineclaw_bridge-{VERSION}.dist-info/METADATA").decode()
        assert f"\nVersion: {VERSION}\n" in metadata
        assert f'__version__ = "{VERSION}"' in bridge.read("bridge/__init__.py").decode()
        assert "bridge/console/static/vendor/uplot/LICENSE" in bridge.namelist()
        stamps |= {entry.date_time for entry in bridge.infolist()}
    # Every entry carries the commit's time (UTC), none the build's.
    assert stamps == {(2026, 12, 4, 16, 0, 0)}


def test_every_vendored_library_is_named_in_the_notice() -> None:
    notice = (ROOT / "NOTICE").read_text(encoding="utf-8")
    vendored = sorted(p for p in (ROOT / "bridge").rglob("vendor/*") if p.is_dir())
    assert vendored, "no vendored library found: the notice's uPlot entry would be stale"
    for folder in vendored:
        assert str(folder.relative_to(ROOT)) + "/" in notice, folder
        assert (folder / "LICENSE").is_file(), f"{folder} ships without its licence"
    # The jar shades the core alone; a new shaded artifact needs its notice.
    pom = (ROOT / "plugin-java" / "paper" / "pom.xml").read_text(encoding="utf-8")
    includes = pom.split("<artifactSet>")[1].split("</artifactSet>")[0]
    assert includes.count("<include>") == 1 and "dev.mineclaw:mineclaw-core" in includes
    assert "dev.mineclaw:mineclaw-core" in notice


def test_a_release_is_refused_without_its_tag_its_notes_or_a_clean_tree(tmp_path: Path) -> None:
    untagged = _tagged_repository(tmp_path / "untagged", None)
    with pytest.raises(ReleaseError, match="no release tag"):
        tagged_version(untagged)
    _git(untagged, "tag", "v9.8.8")
    made = _build(untagged, tmp_path / "out")
    assert made.returncode == 1 and made.stdout == ""
    assert made.stderr == "release: CHANGELOG.md has no section '## [9.8.8]': write one, then tag\n"
    (untagged / "README.md").write_text("changed\n", encoding="utf-8")
    made = _build(untagged, tmp_path / "out")
    assert made.returncode == 1 and "uncommitted changes (README.md)" in made.stderr
    assert not (tmp_path / "out").exists()
    with pytest.raises(ReleaseError, match="is empty"):
        changelog_section("## [1.0.0]\n\n## [0.9.0]\n\n- old\n", "1.0.0")


@pytest.mark.jvm
async def test_the_released_wheel_serves_and_the_released_jar_links_to_it(
    builds: Builds, tmp_path: Path
) -> None:
    from tests.interaction.processes import BridgeProcess, TestkitProcess, free_port

    files = _named(builds.first)
    bin_dir = install_wheel(files[f"mineclaw_bridge-{VERSION}-py3-none-any.whl"], tmp_path / "v")
    command = str(bin_dir / "mineclaw-bridge")
    config = tmp_path / "config"

    def run(*argv: str) -> str:
        done = subprocess.run(
            [command, *argv], cwd=tmp_path, capture_output=True, text=True,
            timeout=TIMEOUT_S, env=venv_env(),
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    # The wheel's own copy answers: the checkout's bridge says another version.
    assert run("--version").strip() == f"mineclaw-bridge {VERSION}"
    run("init", str(config))
    run("validate", "--config", str(config))
    bridge = await BridgeProcess.start(
        config, port=free_port(), command=(command,), cwd=tmp_path, env={"PYTHONPATH": ""}
    )
    testkit = None
    try:
        testkit = await TestkitProcess.start(
            bridge.url, bridge.token_file, core_from=files[f"Mineclaw-{VERSION}.jar"]
        )
        await testkit.wait_event(lambda e: e.get("event") == "link.up")
        await testkit.send(
            {"op": "player.add", "name": "Steve", "permissions": ["mineclaw.command.chat"]}
        )
        await testkit.send({"op": "chat", "player": "Steve", "text": "@ai hello", "ref": "c1"})
        # A question went through the released bridge (no provider configured: it says so).
        await testkit.wait_event(
            lambda e: e.get("event") == "message" and "not configured yet" in e.get("text", "")
        )
    finally:
        if testkit is not None:
            await testkit.shutdown()
        await bridge.kill()


@pytest.mark.jvm
async def test_the_released_jar_installs_and_runs_the_bridge_it_carries(
    builds: Builds, tmp_path: Path
) -> None:
    """bridge.managed as an owner meets it: the plugin core from the released jar reads the
    wheel that jar carries (as MineclawPlugin does) and runs it; the bridge of the tag's
    version answers."""
    from .test_managed_bridge import managed_bridge_answers

    jar = _named(builds.first)[f"Mineclaw-{VERSION}.jar"]
    await managed_bridge_answers(tmp_path, VERSION, "--managed-wheel", "classpath", core_from=jar)


def test_the_release_workflow_builds_with_make_release_and_names_each_stores_secret() -> None:
    workflow = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text("utf-8"))
    # PyYAML reads the key `on` as True (YAML 1.1).
    assert workflow[True] == {"push": {"tags": ["v*.*.*"]}}
    jobs = workflow["jobs"]
    assert any("make release" in step.get("run", "") for step in jobs["build"]["steps"])
    text = (ROOT / ".github/workflows/release.yml").read_text("utf-8")
    for secret in ("HANGAR_API_KEY", "MODRINTH_TOKEN", "PYPI_API_TOKEN"):
        # Used, and named in the header that tells the owner what to set up.
        assert f"secrets.{secret}" in text, secret
        assert re.search(rf"^#\s+(secrets\s+)?{secret}\s", text, re.MULTILINE), secret


def test_make_plugin_builds_the_checkouts_wheel_into_the_folder_the_jar_takes_it_from() -> None:
    made = subprocess.run(
        ["make", "-n", "--no-print-directory", "plugin", "SHARED_PAPER="],
        cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S,
        env={k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS")},
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    lines = made.stdout.splitlines()
    wheel = [i for i, line in enumerate(lines) if "release/build.py --plugin-wheel" in line]
    maven = [i for i, line in enumerate(lines) if "-Ppaper -pl paper -am package" in line]
    assert wheel and maven and wheel[0] < maven[0], made.stdout
    assert lines[wheel[0]].split("--plugin-wheel ")[1].split()[0] == (
        "plugin-java/paper/target/bridge-wheel"
    )
    pom = (ROOT / "plugin-java/paper/pom.xml").read_text(encoding="utf-8")
    default = "<mineclaw.bridge.wheel.dir>${project.build.directory}/bridge-wheel</"
    assert default in pom


def test_the_plugin_wheel_is_the_checkout_as_it_is_and_the_same_bytes_twice(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "checkout"
    listed = _git(ROOT, "ls-files", "-z", "--cached", "--", *PACKAGED, ".gitignore")
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "the checkout")
    (repo / "bridge" / "not_committed_yet.py").write_text("X = 1\n", encoding="utf-8")
    (repo / "bridge" / "left_over.pyc").write_bytes(b"ignored by .gitignore")
    first = plugin_wheel(repo, tmp_path / "first")
    second = plugin_wheel(repo, tmp_path / "second")
    assert first.read_bytes() == second.read_bytes()
    assert (tmp_path / "first" / "wheel.txt").read_text(encoding="utf-8") == f"{first.name}\n"
    assert sorted(p.name for p in (tmp_path / "first").iterdir()) == [first.name, "wheel.txt"]
    with zipfile.ZipFile(first) as wheel:
        names = wheel.namelist()
        stamps = {entry.date_time for entry in wheel.infolist()}
    assert "bridge/not_committed_yet.py" in names and "bridge/left_over.pyc" not in names
    assert "bridge/cli/__init__.py" in names
    assert stamps == {(2026, 12, 4, 16, 0, 0)}  # the last commit's time, not the build's
