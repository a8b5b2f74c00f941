"""A wheelhouse of the bridge's dependencies made from what this venv already has installed, so
a test can install the bridge the way ``bridge.managed`` does on a server without internet
(``pip install --no-index --find-links``) with nothing downloaded.

Each distribution the bridge needs (``pyproject.toml``'s dependencies, their extras and theirs,
markers evaluated for this interpreter) is zipped again from the files its ``RECORD`` lists,
under the first tag its ``WHEEL`` file names, with a fresh ``RECORD``. Scripts outside the
package folder and byte code are left out (pip writes both again). The result is cached under
``~/.cache/mineclaw/wheelhouse/<key>``, the key naming every distribution's version and the
interpreter, as the model servers are; a first build takes about half a minute.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import sys
import tempfile
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.tags import sys_tags

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mineclaw" / "wheelhouse"
LEFT_OUT = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


def needed() -> list[metadata.Distribution]:
    """The installed distributions the bridge's wheel depends on, transitively, by name."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    todo = [(Requirement(spec), "") for spec in project["dependencies"]]
    found: dict[str, metadata.Distribution] = {}
    extras_done: set[tuple[str, str]] = set()
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        key = canonical(requirement.name)
        dist = found.get(key) or metadata.distribution(requirement.name)
        found[key] = dist
        for wanted in ("", *sorted(requirement.extras)):
            if (key, wanted) in extras_done:
                continue
            extras_done.add((key, wanted))
            todo += [(Requirement(spec), wanted) for spec in dist.requires or ()]
    return [found[key] for key in sorted(found)]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def dependency_wheelhouse() -> Path:
    """The cached wheelhouse for this venv's versions, made first when missing."""
    dists = needed()
    pins = "\n".join(f"{canonical(d.metadata['Name'])}=={d.version}" for d in dists)
    key = hashlib.sha256(f"2\n{sys.version}\n{sys.platform}\n{pins}".encode()).hexdigest()[:16]
    target = CACHE / key
    if target.is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"{key}-", dir=CACHE))
    try:
        for dist in dists:
            repack(dist, scratch)
        try:
            scratch.rename(target)  # whole or not at all; a parallel run may have won
        except OSError:
            shutil.rmtree(scratch)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return target


def repack(dist: metadata.Distribution, folder: Path) -> Path:
    """``dist`` as a wheel in ``folder``."""
    wheel_text = dist.read_text("WHEEL") or ""
    # The first tag this interpreter accepts (a universal wheel lists py2-none-any first).
    ours = {str(tag) for tag in sys_tags()}
    lines = wheel_text.splitlines()
    listed = [line.split(":", 1)[1].strip() for line in lines if line.startswith("Tag:")]
    tags = [tag for tag in listed if tag in ours]
    if not tags:
        name = dist.metadata["Name"]
        raise RuntimeError(f"{name}: no tag of its WHEEL file ({listed}) fits this Python")
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    path = folder / f"{name}-{dist.version}-{tags[0]}.whl"
    records: list[str] = []
    record_name = ""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as wheel:
        for file in dist.files or ():
            parts = file.parts
            if parts[0] == ".." or "__pycache__" in parts or file.suffix == ".pyc":
                continue
            if parts[0].endswith(".dist-info") and file.name in LEFT_OUT:
                if file.name == "RECORD":
                    record_name = str(file)
                continue
            if parts[0].endswith(".data"):
                continue
            data = Path(str(dist.locate_file(file))).read_bytes()
            wheel.writestr(str(file), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            records.append(f"{file},sha256={digest},{len(data)}")
        if not record_name:
            raise RuntimeError(f"{dist.metadata['Name']}: no RECORD among its files")
        records.append(f"{record_name},,")
        wheel.writestr(record_name, "\n".join(records) + "\n")
    return path
