"""The handshake MAC and the token file on disk."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from bridge.errors import LinkError
from bridge.link.auth import (
    TOKEN_FILE_NAME,
    TokenFileError,
    compute_mac,
    ensure_token_file,
    mac_matches,
    new_nonce,
    read_token,
)


def test_a_mac_matches_only_its_own_inputs() -> None:
    nonce = new_nonce()
    mac = compute_mac("token-" * 6, nonce, "instance")
    assert len(mac) == 64 and mac == mac.lower()
    assert mac_matches("token-" * 6, nonce, "instance", mac)
    assert not mac_matches("token-" * 6, nonce, "other-instance", mac)
    assert not mac_matches("token-" * 6, new_nonce(), "instance", mac)
    assert not mac_matches("other-" * 6, nonce, "instance", mac)
    assert not mac_matches("token-" * 6, nonce, "instance", mac.upper())


def test_the_first_start_writes_a_private_random_token(tmp_path: Path) -> None:
    path = ensure_token_file(tmp_path)
    assert path == tmp_path / TOKEN_FILE_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    token = read_token(path)
    assert len(token) == 43 and path.read_text() == token + "\n"
    other = tmp_path / "other"
    other.mkdir()
    assert read_token(ensure_token_file(other)) != token


def test_a_later_start_keeps_the_existing_token(tmp_path: Path) -> None:
    first = read_token(ensure_token_file(tmp_path))
    assert read_token(ensure_token_file(tmp_path)) == first


def test_a_token_written_by_hand_with_surrounding_whitespace_is_read(tmp_path: Path) -> None:
    path = tmp_path / TOKEN_FILE_NAME
    path.write_text("  " + "t" * 40 + "\r\n")
    path.chmod(0o600)
    assert read_token(path) == "t" * 40


def test_a_token_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    path = ensure_token_file(tmp_path)
    path.chmod(0o644)
    with pytest.raises(TokenFileError, match=r"mode 0644.*chmod 600") as refused:
        ensure_token_file(tmp_path)
    assert str(path) in str(refused.value)
    assert isinstance(refused.value, LinkError)


def test_a_symlinked_token_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("x" * 43)
    target.chmod(0o600)
    (tmp_path / TOKEN_FILE_NAME).symlink_to(target)
    with pytest.raises(TokenFileError, match="symlink"):
        ensure_token_file(tmp_path)
    dangling = tmp_path / "d"
    dangling.mkdir()
    (dangling / TOKEN_FILE_NAME).symlink_to(tmp_path / "missing")
    with pytest.raises(TokenFileError, match="symlink"):
        ensure_token_file(dangling)
    assert not (tmp_path / "missing").exists()
    assert target.read_text() == "x" * 43


def test_a_directory_in_place_of_the_token_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / TOKEN_FILE_NAME).mkdir(mode=0o700)
    with pytest.raises(TokenFileError, match="not a regular file"):
        ensure_token_file(tmp_path)


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"short\n", "fewer than 32"), (b"\xff" * 40, "not UTF-8"), (b"", "fewer")],
)
def test_a_token_file_without_a_usable_token_is_refused(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / TOKEN_FILE_NAME
    path.write_bytes(content)
    path.chmod(0o600)
    with pytest.raises(TokenFileError, match=message):
        read_token(path)


def test_a_missing_config_folder_is_reported_with_its_path(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError, match="cannot create") as refused:
        ensure_token_file(tmp_path / "absent")
    assert "absent" in str(refused.value)


def test_the_token_file_is_created_0600_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        path = ensure_token_file(tmp_path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
