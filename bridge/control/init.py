"""Creating the configuration folder: every missing file from its default, nothing overwritten."""

from __future__ import annotations

import os
from pathlib import Path

from bridge.control.envfile import ENV_FILE
from bridge.control.layout import (
    DEFAULT_SKILL_FILES,
    DEFAULT_WORKSPACE_FILES,
    ENV_TEMPLATE,
    YAML_FILES,
    default_bytes,
)
from bridge.errors import ConfigError


def init_config_dir(path: Path) -> list[Path]:
    """Create what is missing under ``path`` and return what was created, in creation order.

    Existing files are never touched, even when invalid. Example skills are written only when
    the skills folder itself is new, so a skill the owner deleted stays deleted.
    """
    created: list[Path] = []
    try:
        _make_dir(path, created)
        for name in YAML_FILES:
            _create(path / name, default_bytes(name), 0o644, created)
        _create(path / ENV_FILE, ENV_TEMPLATE.encode("utf-8"), 0o600, created)
        _make_dir(path / "workspace", created)
        for name in DEFAULT_WORKSPACE_FILES:
            _create(path / name, default_bytes(name), 0o644, created)
        skills_new = _make_dir(path / "workspace" / "skills", created)
        if skills_new:
            for name in DEFAULT_SKILL_FILES:
                _create(path / name, default_bytes(name), 0o644, created)
    except OSError as exc:
        raise ConfigError(f"cannot initialise {path}: {exc.strerror or exc}") from exc
    return created


def _make_dir(path: Path, created: list[Path]) -> bool:
    try:
        path.mkdir(mode=0o755, parents=True)
    except FileExistsError:
        if not path.is_dir():
            raise ConfigError(f"{path} exists and is not a folder") from None
        return False
    created.append(path)
    return True


def _create(path: Path, data: bytes, mode: int, created: list[Path]) -> None:
    # O_EXCL: never overwrite, and never follow a link planted under the name.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, mode)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, mode)  # the umask must not widen or narrow the mode of .env
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)
    created.append(path)
