"""Whether a ``--config`` folder is a Mineclaw configuration folder at all.

A mistyped ``--config`` must not be read as an empty configuration (every file "ok", all
defaults) nor be filled with new files: a command names the problem in one line instead.
"""

from __future__ import annotations

from pathlib import Path

from bridge.control.envfile import ENV_FILE
from bridge.control.layout import YAML_FILES

# What only a configuration folder holds: the YAML files, .env, the link token serve writes, the
# workspace. The token's name is the link's (bridge.link.auth); repeated to keep layers apart.
KNOWN_ENTRIES: tuple[str, ...] = (*YAML_FILES, ENV_FILE, "link.token", "workspace")


def folder_refusal(path: Path) -> str | None:
    """One line saying why ``path`` cannot be used as the configuration folder, or ``None``."""
    try:
        if not path.exists():
            return (
                f"configuration folder {path} does not exist "
                f"(`mineclaw-bridge init {path}` creates it)"
            )
        if not path.is_dir():
            return f"{path} is not a folder; --config names the configuration folder"
        if not any((path / name).exists() for name in KNOWN_ENTRIES):
            return (
                f"{path} holds none of the configuration files ({', '.join(YAML_FILES)}); "
                f"check --config, or run `mineclaw-bridge init {path}` to write them there"
            )
    except OSError as exc:
        return f"cannot read the configuration folder {path}: {exc.strerror or exc}"
    return None
