"""`make release`: the artifacts of one tagged version, the same bytes from every build.

From the committed tree at HEAD (``git archive``: nothing untracked or built locally gets in),
for the version its tag ``vX.Y.Z`` names:

- ``Mineclaw-X.Y.Z.jar``: the plugin, the version in its plugin.yml and name, checked by the
  link check against every supported Paper API line;
- ``mineclaw_bridge-X.Y.Z-py3-none-any.whl`` and ``mineclaw_bridge-X.Y.Z.tar.gz``: the bridge;
- ``CHANGES-X.Y.Z.md``: the version's section of CHANGELOG.md (a tag without one is refused);
- ``LICENSE`` and ``NOTICE`` (what the jar shades and the wheel vendors);
- ``SHA256SUMS`` over all of them (``sha256sum -c SHA256SUMS``).

Every timestamp is the commit's time (SOURCE_DATE_EPOCH, Maven's project.build.outputTimestamp)
and every archive is written in a fixed order with fixed owners and modes, so two builds of one
tag on one toolchain give byte-identical files (tests/deploy/test_release.py builds twice).

``--plugin-wheel DIR`` (``make plugin``) builds only the wheel of the checkout as it is
(committed or not, nothing ignored) into DIR, the folder the plugin jar takes it from, so a jar
built from a checkout carries its bridge for ``bridge.managed`` as the release jar does.

Standard library only: it runs before anything is installed from the checkout.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TAG = re.compile(r"v(\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?)")
"""Release tags: a version both PEP 440 and Maven read the same way (0.2.0, 0.2.0rc1)."""
VERSION_LINE = re.compile(r'^__version__ = "[^"]*"$', re.MULTILINE)
ZIP_EPOCH = 315619200  # 1980-01-02: zip cannot store an earlier time


class ReleaseError(Exception):
    """Why no release was built, one line for the person who ran it."""


def git(root: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if result.returncode != 0:
        raise ReleaseError(f"git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def tagged_version(root: Path) -> str:
    tags = git(root, "tag", "--points-at", "HEAD").split()
    versions = sorted({m.group(1) for tag in tags if (m := TAG.fullmatch(tag))})
    if not versions:
        raise ReleaseError(
            "HEAD has no release tag (vX.Y.Z): tag the commit to release, e.g. git tag v0.2.0"
        )
    if len(versions) > 1:
        raise ReleaseError(f"HEAD has several release tags ({', '.join(versions)}): keep one")
    return versions[0]


def require_clean(root: Path) -> None:
    changed = git(root, "status", "--porcelain", "--untracked-files=no").splitlines()
    if changed:
        shown = ", ".join(line[3:] for line in changed[:5])
        raise ReleaseError(
            f"the checkout has uncommitted changes ({shown}): a release is built from the tag's "
            "commit alone; commit or stash them"
        )


def changelog_section(text: str, version: str) -> str:
    """The section ``## [version]`` of CHANGELOG.md, up to the next ``## `` heading."""
    heading = re.compile(rf"^## \[{re.escape(version)}\][^\n]*$", re.MULTILINE)
    found = heading.search(text)
    if found is None:
        raise ReleaseError(f"CHANGELOG.md has no section '## [{version}]': write one, then tag")
    following = re.compile(r"^## ", re.MULTILINE).search(text, found.end())
    body = text[found.end() : following.start() if following else len(text)].strip()
    if not body:
        raise ReleaseError(f"CHANGELOG.md: the section '## [{version}]' is empty")
    return f"{found.group(0)}\n\n{body}\n"


def export_tree(root: Path, dest: Path) -> None:
    archive = dest.parent / "tree.tar"
    git(root, "archive", "--format=tar", "-o", str(archive), "HEAD")
    with tarfile.open(archive) as tree:
        tree.extractall(dest, filter="data")
    archive.unlink()


def set_bridge_version(source: Path, version: str) -> None:
    init = source / "bridge" / "__init__.py"
    text = init.read_text(encoding="utf-8")
    if len(VERSION_LINE.findall(text)) != 1:
        raise ReleaseError(f"{init.relative_to(source)}: expected one __version__ line")
    init.write_text(VERSION_LINE.sub(f'__version__ = "{version}"', text), encoding="utf-8")


def run(argv: list[str], cwd: Path, env: dict[str, str], what: str) -> None:
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-40:])
        raise ReleaseError(f"{what} failed:\n{tail}")


def require_build_module() -> None:
    try:
        import build  # noqa: F401  (only asked whether it is there)
    except ImportError:
        raise ReleaseError(
            f"{sys.executable} has no 'build' module: run make install (the dev extras have it)"
        ) from None


def build_bridge(source: Path, out: Path, env: dict[str, str]) -> None:
    require_build_module()
    argv = [sys.executable, "-m", "build", "--wheel", "--sdist", "--no-isolation"]
    run([*argv, "--outdir", str(out)], source, env, "the bridge's wheel and sdist")


def carried_wheel(wheel: Path, folder: Path) -> Path:
    """The folder the jar takes the bridge's wheel from (``bridge.managed``): the wheel and
    ``wheel.txt`` naming it (the plugin's ``BridgeWheel`` reads both)."""
    folder.mkdir(parents=True)
    shutil.copyfile(wheel, folder / wheel.name)
    (folder / "wheel.txt").write_text(wheel.name + "\n", encoding="utf-8")
    return folder


PACKAGED = ("pyproject.toml", "README.md", "LICENSE", "bridge")
"""What the wheel is built from (pyproject.toml names the package and the readme)."""


def plugin_wheel(root: Path, folder: Path) -> Path:
    """The checkout's wheel (its files as they are: committed, changed or new, not ignored),
    normalised to the last commit's time, in ``folder`` (replaced) with ``wheel.txt``."""
    listed = git(
        root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *PACKAGED
    )
    epoch = int(git(root, "log", "-1", "--format=%ct", "HEAD").strip())
    with tempfile.TemporaryDirectory(prefix="mineclaw-plugin-wheel-") as scratch:
        source, staging = Path(scratch) / "source", Path(scratch) / "dist"
        for name in filter(None, listed.split("\0")):
            if (root / name).is_file():  # a deleted file is still listed until committed
                (source / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(root / name, source / name)
        env = {**os.environ, "SOURCE_DATE_EPOCH": str(epoch), "PYTHONHASHSEED": "0"}
        argv = [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(staging),
        ]
        require_build_module()
        run(argv, source, env, "the bridge's wheel")
        [wheel] = staging.glob("*.whl")
        normalized_zip(wheel, epoch)
        if folder.exists():
            shutil.rmtree(folder)
        return carried_wheel(wheel, folder) / wheel.name


def build_plugin(source: Path, version: str, epoch: int, linkcheck: bool, wheel_dir: Path) -> Path:
    java_home = os.environ.get("JAVA_HOME", "")
    if not java_home:
        raise ReleaseError("JAVA_HOME is not set: the plugin needs a JDK 25 (make sets it)")
    mvn = ["mvn", "-B", "-q", "--no-transfer-progress", "-f", "plugin-java/pom.xml", "-Ppaper"]
    mvn += [f"-Dmineclaw.version={version}", f"-Dproject.build.outputTimestamp={epoch}"]
    mvn += [f"-Dmineclaw.bridge.wheel.dir={wheel_dir}"]
    if linkcheck:
        # The jar, then only the link check's tests: the unit suites ran in CI already.
        mvn += ["-pl", "paper,linkcheck", "-am", "verify", "-Dtest=PluginJarLinksTest"]
        mvn += ["-Dsurefire.failIfNoSpecifiedTests=false"]
    else:
        mvn += ["-pl", "paper", "-am", "package", "-DskipTests"]
    run(mvn, source, {**os.environ, "SOURCE_DATE_EPOCH": str(epoch)}, "the plugin jar")
    jar = source / "plugin-java" / "paper" / "target" / f"Mineclaw-{version}.jar"
    if not jar.is_file():
        raise ReleaseError(f"Maven made no {jar.name}")
    return jar


def _mode(executable: bool, directory: bool = False) -> int:
    return 0o755 if executable or directory else 0o644


def normalized_zip(path: Path, epoch: int) -> None:
    """Rewrites a wheel with every entry at ``epoch`` and modes 644/755, order kept (RECORD
    holds the contents' hashes, which do not change)."""
    stamp = time.gmtime(max(epoch, ZIP_EPOCH))[:6]
    buffer = io.BytesIO()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(buffer, "w") as target:
        for entry in source.infolist():
            info = zipfile.ZipInfo(entry.filename, date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            executable = bool((entry.external_attr >> 16) & 0o111)
            info.external_attr = (0o100000 | _mode(executable)) << 16
            target.writestr(info, source.read(entry))
    path.write_bytes(buffer.getvalue())


def normalized_sdist(path: Path, epoch: int) -> None:
    """Rewrites a .tar.gz sorted by name, every member at ``epoch``, owned by 0:0 with no
    names, modes 644/755, and a gzip header without time or file name."""
    with tarfile.open(path, "r:gz") as source:
        members = sorted(source.getmembers(), key=lambda member: member.name)
        contents = {
            m.name: source.extractfile(m).read()  # type: ignore[union-attr]
            for m in members
            if m.isfile()
        }
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as target:
        for member in members:
            member.mtime, member.uid, member.gid = epoch, 0, 0
            member.uname = member.gname = ""
            member.pax_headers = {}
            member.mode = _mode(bool(member.mode & 0o111), member.isdir())
            data = contents.get(member.name)
            target.addfile(member, io.BytesIO(data) if data is not None else None)
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=epoch) as gz:
        gz.write(raw.getvalue())
    path.write_bytes(packed.getvalue())


def write_sums(out: Path) -> None:
    lines = [
        f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.name}\n"
        for path in sorted(out.iterdir())
    ]
    (out / "SHA256SUMS").write_text("".join(lines), encoding="utf-8")


def release(root: Path, out: Path, *, linkcheck: bool = True) -> list[Path]:
    version = tagged_version(root)
    require_clean(root)
    epoch = int(git(root, "log", "-1", "--format=%ct", "HEAD").strip())
    with tempfile.TemporaryDirectory(prefix="mineclaw-release-") as scratch:
        source = Path(scratch) / "source"
        export_tree(root, source)
        notes = changelog_section((source / "CHANGELOG.md").read_text(encoding="utf-8"), version)
        set_bridge_version(source, version)
        staging = Path(scratch) / "dist"
        staging.mkdir()
        env = {**os.environ, "SOURCE_DATE_EPOCH": str(epoch), "PYTHONHASHSEED": "0"}
        build_bridge(source, staging, env)
        [wheel] = staging.glob("*.whl")
        normalized_zip(wheel, epoch)  # before the jar takes it in: both reproducible
        carried = carried_wheel(wheel, Path(scratch) / "carried-wheel")
        jar = build_plugin(source, version, epoch, linkcheck, carried)
        shutil.copyfile(jar, staging / jar.name)
        for sdist in staging.glob("*.tar.gz"):
            normalized_sdist(sdist, epoch)
        (staging / f"CHANGES-{version}.md").write_text(notes, encoding="utf-8")
        for name in ("LICENSE", "NOTICE"):
            shutil.copyfile(source / name, staging / name)
        write_sums(staging)
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(staging, out)
    return sorted(out.iterdir())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make release", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="replaced; dist/")
    parser.add_argument(
        "--no-linkcheck",
        action="store_true",
        help="skip the link check (it does not change the jar; the reproducibility test's "
        "second build uses this)",
    )
    parser.add_argument(
        "--plugin-wheel",
        type=Path,
        metavar="DIR",
        help="only the checkout's wheel, into DIR with wheel.txt (make plugin)",
    )
    args = parser.parse_args(argv)
    if args.plugin_wheel is not None:
        try:
            print(plugin_wheel(ROOT, args.plugin_wheel.resolve()))
        except ReleaseError as exc:
            print(f"plugin wheel: {exc}", file=sys.stderr)
            return 1
        return 0
    try:
        built = release(ROOT, args.out.resolve(), linkcheck=not args.no_linkcheck)
    except ReleaseError as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 1
    for path in built:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
