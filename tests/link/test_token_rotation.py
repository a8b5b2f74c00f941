"""``link.token`` read again when it changes: a new token is in force at once, the watch drops
the link that proved the old one, a deleted file is made afresh, an unsafe file is not taken."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from bridge.link.auth import ensure_token_file, new_token
from bridge.link.codes import CloseCode
from bridge.link.protocol import DEFAULT_SERVER_ID
from bridge.link.token_rotation import ROTATED_REASON, LinkToken, watch_token


def replace_token(path: Path, token: str, mode: int = 0o600) -> None:
    """Written beside and renamed over, as the documented rotation does."""
    fresh = path.with_name(path.name + ".new")
    fresh.write_text(token + "\n", encoding="ascii")
    fresh.chmod(mode)
    os.replace(fresh, path)


def test_a_rotated_file_is_in_force_at_the_next_read(tmp_path: Path) -> None:
    path = ensure_token_file(tmp_path)
    token = LinkToken(path)
    old = token.current()
    assert not token.rotated()
    new = new_token()
    replace_token(path, new)
    assert token.current() == new != old
    assert token.rotated() and not token.rotated()  # told once
    assert token.rotations == 1


def test_a_deleted_file_is_made_afresh_as_a_new_token(tmp_path: Path) -> None:
    path = ensure_token_file(tmp_path)
    token = LinkToken(path)
    old = token.current()
    path.unlink()
    assert token.current() != old
    assert path.exists() and (path.stat().st_mode & 0o777) == 0o600


@pytest.mark.parametrize(("content", "mode"), [(new_token(), 0o644), ("short", 0o600)])
def test_an_unsafe_file_is_not_taken_and_the_last_good_token_stays(
    tmp_path: Path, content: str, mode: int, caplog: pytest.LogCaptureFixture
) -> None:
    path = ensure_token_file(tmp_path)
    token = LinkToken(path)
    old = token.current()
    replace_token(path, content, mode)
    assert token.current() == old and not token.rotated()
    assert "previous token stays in force" in caplog.text


class _Server:
    def __init__(self) -> None:
        self.dropped: asyncio.Queue[tuple[str, CloseCode, str]] = asyncio.Queue()

    async def drop(self, server_id: str, code: CloseCode, reason: str) -> bool:
        self.dropped.put_nowait((server_id, code, reason))
        return True

    def revoke_stale(self) -> list[object]:
        return []


async def test_the_watch_drops_the_default_link_when_the_token_is_rotated(tmp_path: Path) -> None:
    path = ensure_token_file(tmp_path)
    token = LinkToken(path)
    server = _Server()
    told: asyncio.Queue[str] = asyncio.Queue()
    watch = asyncio.create_task(
        watch_token(token, server, interval_s=0.01, on_rotated=lambda: told.put_nowait("rotated"))
    )
    try:
        replace_token(path, new_token())
        dropped = await asyncio.wait_for(server.dropped.get(), 10)
        assert dropped == (DEFAULT_SERVER_ID, CloseCode.NORMAL, ROTATED_REASON)
        # Told after the drop: the default server's turns stop (`Network.rotated`).
        assert await asyncio.wait_for(told.get(), 10) == "rotated"
    finally:
        watch.cancel()
