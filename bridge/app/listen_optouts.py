"""The players who opted out of listen mode (``/mineclaw listen ignore-me``), remembered across
restarts in one small file of the bridge's data folder, ``data/listen-optouts.json``.

The file holds ``{"version": 1, "players": ["<uuid>", ...]}``. It is replaced whole, through a
temporary file renamed over it after an fsync, so a crash leaves the old list or the new one,
never half of either. A file that cannot be read is reported with its path and set aside
(renamed ``.bad``), never silently overwritten: the owner can still read what it held.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import uuid
from pathlib import Path

from bridge.errors import StoreError

log = logging.getLogger(__name__)

FILE_NAME = "listen-optouts.json"
MAX_PLAYERS = 100_000
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class ListenOptOuts:
    """The opt-out set of one bridge: read from the file when built, written whole again by
    ``save`` after every change. ``players`` is the live set every server's listen mode shares
    (``ListenMode.share_ignored``); saves from several servers at once are serialised."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE_NAME
        self._lock = threading.Lock()
        self.players: set[str] = set(self.load())

    def load(self) -> frozenset[str]:
        """The remembered players; an unreadable file is set aside with an error in the log."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return frozenset()
        except OSError as exc:
            log.error("%s: cannot be read (%s); nobody is opted out", self.path, exc.strerror)
            return frozenset()
        try:
            return _parse(raw)
        except ValueError as exc:
            aside = self.path.with_name(FILE_NAME + ".bad")
            log.error("%s: %s; set aside as %s, nobody is opted out", self.path, exc, aside.name)
            try:
                os.replace(self.path, aside)
            except OSError as move:
                log.error("%s could not be set aside: %s", self.path, move.strerror)
            return frozenset()

    def save(self) -> None:
        """Replace the file with ``players`` as they are now; raises ``StoreError`` when it
        cannot be written. Blocking: run it in a worker thread."""
        with self._lock:
            self._write(sorted(self.players))

    def _write(self, players: list[str]) -> None:
        body = json.dumps({"version": 1, "players": players}, indent=0).encode()
        temporary = self.path.with_name(f".{FILE_NAME}.{uuid.uuid4().hex}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, body)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temporary, self.path)
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            raise StoreError(f"{self.path}: cannot be written: {exc.strerror or exc}") from exc


def _parse(raw: bytes) -> frozenset[str]:
    try:
        document = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(document, dict) or document.get("version") != 1:
        raise ValueError('expected {"version": 1, "players": [...]}')
    players = document.get("players")
    if not isinstance(players, list) or len(players) > MAX_PLAYERS:
        raise ValueError(f"players must be a list of at most {MAX_PLAYERS} UUIDs")
    for index, player in enumerate(players):
        if not isinstance(player, str) or not _UUID.fullmatch(player):
            raise ValueError(f"players[{index}] is not a lower-case UUID")
    return frozenset(players)
