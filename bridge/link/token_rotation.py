"""``link.token`` rotated while the bridge runs: the new token links, the old one no longer does.

The plugin reads ``link.token`` again on every connection attempt, so rotating needs nothing of
it but a reconnect. The bridge reads the file again whenever it changed (its inode, size or
modification time: a ``stat`` per handshake and per check), so the next handshake is judged by
the new token; `LinkToken.rotated` tells the caller's watch when it changed, and the caller
drops the link that proved the old token, so the plugin links again with the new one within a
check interval. A missing file is made afresh (deleting ``link.token`` is the one-step
rotation). A file that is no longer safe (another user's, readable by others, too short) is
not taken: the last good token stays in force and the problem is logged once per change.

There is no grace period for the old token: the plugin and the bridge read the same file, and a
rotation is usually made because the old token may be known to someone else.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from bridge.executors import Pool, run_in
from bridge.link.auth import TokenFileError, ensure_token_file, read_token
from bridge.link.codes import CloseCode
from bridge.link.protocol import DEFAULT_SERVER_ID

log = logging.getLogger(__name__)

CHECK_INTERVAL_S = 2.0
"""How often ``serve`` looks at ``link.token`` for a rotation."""

_Stamp = tuple[int, int, int, int]


def _stamp(path: Path) -> _Stamp | None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode)


class LinkToken:
    """The token of ``link.token`` in force now, read again when the file changes."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._stamp = _stamp(path)
        self._token = read_token(path)
        self._rotations = 0
        self._reported = 0

    @property
    def path(self) -> Path:
        return self._path

    @property
    def rotations(self) -> int:
        """How many times a new token was taken since the bridge started."""
        return self._rotations

    def current(self) -> str:
        """The token in force (the file is looked at first); for each handshake."""
        self._refresh()
        return self._token

    def rotated(self) -> bool:
        """Whether the token changed since the last call that answered True (for the watch)."""
        self._refresh()
        if self._rotations == self._reported:
            return False
        self._reported = self._rotations
        return True

    def _refresh(self) -> None:
        stamp = _stamp(self._path)
        if stamp == self._stamp:
            return
        try:
            if stamp is None:  # deleted: a fresh token is the rotation the owner asked for
                ensure_token_file(self._path.parent)
                stamp = _stamp(self._path)
            token = read_token(self._path)
        except TokenFileError as exc:
            self._stamp = stamp
            log.error("link.token not taken, the previous token stays in force: %s", exc)
            return
        self._stamp = stamp
        if token != self._token:
            self._token = token
            self._rotations += 1
            log.warning("link.token changed: the new token is in force, the old one refused")


class _Droppable(Protocol):
    async def drop(self, server_id: str, code: CloseCode, reason: str) -> bool: ...

    def revoke_stale(self) -> object: ...


ROTATED_REASON = "the link token was rotated; link again with the new one"


async def watch_token(
    token: LinkToken,
    server: _Droppable,
    *,
    interval_s: float = CHECK_INTERVAL_S,
    on_rotated: Callable[[], None] | None = None,
) -> None:
    """Until cancelled: when ``link.token`` changed, drop the default server's link (it proved
    the old token) and tell ``on_rotated`` (`bridge.app.network.network.Network.rotated`: the
    default server's turns stop); the plugin reconnects and proves the new one. The other
    servers' links whose token a reload changed or removed are closed too: none of them is
    served a frame after the reload (`LinkServer` judges each by the token in force), and this
    closes the idle ones."""
    while True:
        await asyncio.sleep(interval_s)
        server.revoke_stale()
        try:
            rotated = await run_in(Pool.STORE, token.rotated)
        except OSError as exc:
            log.error("link.token not checked: %s", exc)
            continue
        if rotated:
            await server.drop(DEFAULT_SERVER_ID, CloseCode.NORMAL, ROTATED_REASON)
            if on_rotated is not None:
                try:
                    on_rotated()
                except Exception:  # the watch goes on: the next rotation must be seen too
                    log.exception("after the link token's rotation")
