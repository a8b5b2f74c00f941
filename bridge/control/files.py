"""Reading control-plane files by fixed name, refusing links and anything not a regular file.

The file is opened with ``O_NOFOLLOW`` and checked with ``fstat`` on the open descriptor, so a
link swapped in between a check and the open cannot redirect the read; ``O_NONBLOCK`` keeps a
FIFO planted under a control-plane name from blocking the bridge.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

from bridge.control.problems import ConfigLoadError, Problem

_LINK_REFUSED = "is a symbolic link; control-plane files must be regular files"

FileIdentity = tuple[int, int, int] | None
"""``(size, mtime_ns, inode)`` of a file as it was read, ``None`` when it did not exist."""

_reads: ContextVar[dict[Path, FileIdentity] | None] = ContextVar("control_reads", default=None)


@contextlib.contextmanager
def recording_reads() -> Iterator[dict[Path, FileIdentity]]:
    """Every ``read_regular_file`` inside the block notes what it read (or found missing), so
    the reader can check afterwards that no file changed while the folder was being read."""
    seen: dict[Path, FileIdentity] = {}
    token = _reads.set(seen)
    try:
        yield seen
    finally:
        _reads.reset(token)


def identity_of(path: Path) -> FileIdentity:
    """What ``path`` is now, by name, without following a link."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError:
        return (-1, -1, -1)  # unreadable now: differs from anything that was read
    return _identity(info)


def _identity(info: os.stat_result) -> tuple[int, int, int]:
    return (info.st_size, info.st_mtime_ns, info.st_ino)


def _note(path: Path, identity: FileIdentity) -> None:
    seen = _reads.get()
    if seen is not None:
        seen[path] = identity


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to ``limit`` bytes from ``fd``, however the file grows meanwhile; ask for one byte
    more than you accept to tell "exactly at the cap" from "over it"."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 65_536))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_regular_file(path: Path, *, label: str, max_bytes: int) -> bytes | None:
    """The bytes of ``path``, ``None`` when it does not exist, or ``ConfigLoadError``.

    ``label`` is the name used in problems (the path relative to the config folder).
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        _note(path, None)
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse(label, _LINK_REFUSED) from None
        raise _refuse(label, f"cannot be opened: {exc.strerror}") from exc
    try:
        info = os.fstat(fd)
        _note(path, _identity(info))
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(label, "is not a regular file")
        if info.st_size > max_bytes:
            raise _refuse(label, f"is over {max_bytes} bytes")
        data = read_at_most(fd, max_bytes + 1)
        if len(data) > max_bytes:  # grew while being read
            raise _refuse(label, f"is over {max_bytes} bytes")
        return data
    except OSError as exc:
        raise _refuse(label, f"cannot be read: {exc.strerror}") from exc
    finally:
        os.close(fd)


def _refuse(label: str, message: str) -> ConfigLoadError:
    return ConfigLoadError([Problem(label, None, None, "", message)])
