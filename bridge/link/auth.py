"""The handshake's secrets: nonces, the MAC over them, and the token file on disk.

The token never crosses the wire: the plugin proves it holds it by an HMAC over a nonce the bridge
chose for this connection. The token file is created with mode 0600 and refused when anything
could have let another local user read or swap it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from bridge.errors import LinkError

TOKEN_FILE_NAME = "link.token"
MAC_LABEL = "mineclaw-link-v1"
MIN_TOKEN_CHARS = 32


class TokenFileError(LinkError):
    """The token file could not be created or read, or is not safe to trust."""


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def new_nonce() -> str:
    """A fresh challenge: 32 random bytes as 43 characters of unpadded base64url."""
    return _b64url(secrets.token_bytes(32))


def new_token() -> str:
    """A fresh shared token, in the same form as a nonce."""
    return _b64url(secrets.token_bytes(32))


def compute_mac(token: str, nonce: str, instance_id: str, server_id: str | None = None) -> str:
    """The MAC the plugin sends in ``hello``, as 64 lowercase hex characters.

    A ``hello`` naming its server id has the id in the MAC too, so a MAC made for one server
    cannot be replayed under another id even where an owner gave two servers one token."""
    message = f"{MAC_LABEL}\n{nonce}\n{instance_id}"
    if server_id is not None:
        message += f"\n{server_id}"
    return hmac.new(token.encode(), message.encode(), hashlib.sha256).hexdigest()


def mac_matches(
    token: str, nonce: str, instance_id: str, mac: str, server_id: str | None = None
) -> bool:
    """Whether ``mac`` is right, compared in constant time."""
    expected = compute_mac(token, nonce, instance_id, server_id)
    return hmac.compare_digest(expected.encode(), mac.encode())


def ensure_token_file(config_dir: Path) -> Path:
    """The path of ``link.token`` in ``config_dir``, created with a fresh token if missing.

    The file is created exclusively with mode 0600 and without following a symlink, so a file
    planted between the check and the creation is never written through.
    """
    path = config_dir / TOKEN_FILE_NAME
    if not os.path.lexists(path):
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(path, flags, 0o600)
        except FileExistsError:
            pass  # created by someone else meanwhile; read_token checks it like any other
        except OSError as exc:
            raise TokenFileError(f"{path}: cannot create the token file: {exc.strerror}") from exc
        else:
            with os.fdopen(fd, "w", encoding="ascii") as handle:
                handle.write(new_token() + "\n")
    read_token(path)
    return path


def read_token(path: Path) -> str:
    """The token in ``path``, after checking the file is private to this user."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise TokenFileError(f"{path}: cannot read the token file: {exc.strerror}") from exc
    if stat.S_ISLNK(info.st_mode):
        raise TokenFileError(f"{path}: the token file is a symlink; replace it with a regular file")
    if not stat.S_ISREG(info.st_mode):
        raise TokenFileError(f"{path}: the token file is not a regular file")
    if info.st_mode & 0o077:
        raise TokenFileError(
            f"{path}: the token file has mode {stat.S_IMODE(info.st_mode):04o}; "
            "it must not be readable or writable by group or others (chmod 600)"
        )
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise TokenFileError(f"{path}: the token file belongs to another user")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(4096)
    except OSError as exc:
        raise TokenFileError(f"{path}: cannot read the token file: {exc.strerror}") from exc
    try:
        token = raw.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise TokenFileError(f"{path}: the token file is not UTF-8 text") from exc
    if len(token) < MIN_TOKEN_CHARS:
        raise TokenFileError(
            f"{path}: the token holds {len(token)} characters, fewer than {MIN_TOKEN_CHARS}; "
            "delete the file to have a new one made"
        )
    return token
