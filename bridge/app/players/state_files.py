"""Small JSON files of the bridge's data folder, each replaced whole.

A file is written through a temporary file renamed over it after an fsync, so a crash leaves
the old content or the new, never half of either. A file that cannot be parsed is reported with
its path and set aside (renamed ``.bad``), never silently overwritten: the owner can still read
what it held.
"""

from __future__ import annotations

import json
import logging
import os
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from bridge.errors import StoreError

log = logging.getLogger(__name__)

T = TypeVar("T")


def read_state(path: Path, parse: Callable[[bytes], T], empty: T, what: str) -> T:
    """``parse`` of the file's bytes; ``empty`` when there is none, it cannot be read, or it
    does not parse (then it is set aside and the log says so, ending with ``what``: the
    meaning of starting empty, e.g. "nobody is opted out")."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return empty
    except OSError as exc:
        log.error("%s: cannot be read (%s); %s", path, exc.strerror, what)
        return empty
    try:
        return parse(raw)
    except ValueError as exc:
        aside = path.with_name(path.name + ".bad")
        log.error("%s: %s; set aside as %s, %s", path, exc, aside.name, what)
        try:
            os.replace(path, aside)
        except OSError as move:
            log.error("%s could not be set aside: %s", path, move.strerror)
        return empty


def versioned_players(raw: bytes, shape: str) -> object:
    """The ``players`` of a ``{"version": 1, "players": ...}`` file; ``ValueError`` naming
    ``shape`` (what ``players`` should be) when the file is not that."""
    try:
        document = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(document, dict) or document.get("version") != 1:
        raise ValueError(f'expected {{"version": 1, "players": {shape}}}')
    return document.get("players")


def write_state(path: Path, body: bytes) -> None:
    """Replace ``path`` with ``body``; ``StoreError`` when it cannot be written. Blocking."""
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, body)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise StoreError(f"{path}: cannot be written: {exc.strerror or exc}") from exc


PLAYER_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
"""A player's key in these files: a lower-case UUID."""
