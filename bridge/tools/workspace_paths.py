"""Opening paths inside the workspace without ever leaving it.

A path from the model is split into components and each one is checked as text (no ``..``, no
empty or absolute parts, no NUL or control characters, no over-long names) and then opened with
``O_NOFOLLOW`` relative to the descriptor of the folder before it, starting from a descriptor of
the workspace itself. The kernel refuses a symbolic link at any component, so a link swapped in
between two steps of the walk is refused instead of followed; ``fstat`` on the opened descriptor
decides what it is, never a check on the name made earlier. ``O_NONBLOCK`` keeps a FIFO from
blocking the open; FIFOs, sockets and devices are then refused by their type.

A hard link is a second name for the same file, and nothing in a path shows where else that file
lives, so regular files with more than one link are refused as well.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bridge.tools.results import ErrorCode, ToolFailure

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
MAX_NAME_BYTES = 255
MAX_PATH_CHARS = 1024


@dataclass(slots=True)
class Budget:
    """When a workspace operation must stop: its deadline, or the turn cancelling it."""

    deadline: float
    clock: Callable[[], float] = time.monotonic
    cancelled: threading.Event = field(default_factory=threading.Event)

    @classmethod
    def of(cls, timeout_s: float, *, clock: Callable[[], float] = time.monotonic) -> Budget:
        return cls(deadline=clock() + timeout_s, clock=clock)

    def exhausted(self) -> bool:
        return self.cancelled.is_set() or self.clock() >= self.deadline


def split_path(path: str, *, max_depth: int) -> tuple[str, ...]:
    """The components of a workspace-relative path; ``""`` or ``"."`` is the workspace itself.

    One trailing ``/`` is accepted (``skills/``); every other rule refuses with the reason.
    """
    if len(path) > MAX_PATH_CHARS:
        raise _refused(f"the path is longer than {MAX_PATH_CHARS} characters")
    if "\x00" in path:
        raise _refused("the path contains a NUL character")
    if path in ("", ".", "./"):
        return ()
    if path.startswith("/"):
        raise _refused("absolute paths are refused; give a path relative to the workspace")
    if "\\" in path:
        raise _refused("use / between folder names; \\ is refused")
    parts = tuple(path.removesuffix("/").split("/"))
    for part in parts:
        _check_component(part)
    if len(parts) > max_depth:
        raise _refused(f"the path is deeper than {max_depth} folders")
    return parts


def _check_component(part: str) -> None:
    if part == "":
        raise _refused("the path has an empty component (//)")
    if part in (".", ".."):
        raise _refused(f"'{part}' components are refused")
    for char in part:
        category = unicodedata.category(char)
        # Control, format (bidi overrides, zero-width), surrogates, unassigned, line separators.
        if category[0] == "C" or category in ("Zl", "Zp"):
            raise _refused(f"the path contains the invisible character U+{ord(char):04X}")
    if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise _refused(f"a name in the path is longer than {MAX_NAME_BYTES} bytes")


def open_root(directory: Path) -> int:
    """A descriptor of the workspace folder itself, refusing a link in its place."""
    try:
        fd = os.open(directory, DIR_FLAGS)
    except FileNotFoundError:
        raise ToolFailure(ErrorCode.NOT_FOUND, "the workspace folder does not exist") from None
    except OSError as exc:
        raise ToolFailure(
            ErrorCode.PATH_REFUSED, "the workspace folder is not a real folder (a link?)"
        ) from exc
    return fd


def open_directory(root_fd: int, parts: tuple[str, ...]) -> int:
    """A new descriptor of the folder ``parts`` below ``root_fd``; the caller closes it."""
    current = os.dup(root_fd)
    try:
        for index, part in enumerate(parts):
            shown = "/".join(parts[: index + 1])
            following = _open_at(current, part, DIR_FLAGS, shown, want_directory=True)
            os.close(current)
            current = following
            _require(current, shown, directory=True)
        return current
    except BaseException:
        os.close(current)
        raise


def open_file(root_fd: int, parts: tuple[str, ...]) -> tuple[int, os.stat_result]:
    """A descriptor of the regular file ``parts`` and its ``fstat``; the caller closes it."""
    if not parts:
        raise ToolFailure(ErrorCode.NOT_A_FILE, "the workspace itself is a folder, not a file")
    parent = open_directory(root_fd, parts[:-1])
    try:
        fd = _open_at(parent, parts[-1], FILE_FLAGS, "/".join(parts), want_directory=False)
    finally:
        os.close(parent)
    try:
        return fd, _require(fd, "/".join(parts), directory=False)
    except BaseException:
        os.close(fd)
        raise


def open_child_file(dir_fd: int, name: str, shown: str) -> tuple[int, os.stat_result]:
    """Like ``open_file`` for one name inside an already opened folder."""
    _check_component(name)
    fd = _open_at(dir_fd, name, FILE_FLAGS, shown, want_directory=False)
    try:
        return fd, _require(fd, shown, directory=False)
    except BaseException:
        os.close(fd)
        raise


def open_child_directory(dir_fd: int, name: str, shown: str) -> int:
    """Like ``open_directory`` for one name inside an already opened folder."""
    _check_component(name)
    fd = _open_at(dir_fd, name, DIR_FLAGS, shown, want_directory=True)
    try:
        _require(fd, shown, directory=True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_at(dir_fd: int, name: str, flags: int, shown: str, *, want_directory: bool) -> int:
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        raise ToolFailure(ErrorCode.NOT_FOUND, f"'{shown}' does not exist") from None
    except OSError as exc:
        raise _explain(dir_fd, name, shown, exc, want_directory) from None


def _explain(dir_fd: int, name: str, shown: str, exc: OSError, want_directory: bool) -> ToolFailure:
    # The open already failed safely; this lstat only words the refusal.
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        mode = 0
    if stat.S_ISLNK(mode) or exc.errno == errno.ELOOP:
        return _refused(f"'{shown}' is a symbolic link; links are never followed")
    if want_directory and exc.errno == errno.ENOTDIR:
        if mode == 0 or stat.S_ISDIR(mode):
            # Not a folder when opened, but gone or a folder now: swapped under the walk.
            return _refused(f"'{shown}' changed while it was being opened")
        return ToolFailure(ErrorCode.NOT_A_DIRECTORY, f"'{shown}' is not a folder")
    if stat.S_ISSOCK(mode) or exc.errno == errno.ENXIO:
        return _refused(f"'{shown}' is a socket")
    return _refused(f"'{shown}' cannot be opened ({exc.strerror})")


def _require(fd: int, shown: str, *, directory: bool) -> os.stat_result:
    info = os.fstat(fd)
    mode = info.st_mode
    if directory:
        if not stat.S_ISDIR(mode):
            raise ToolFailure(ErrorCode.NOT_A_DIRECTORY, f"'{shown}' is not a folder")
        return info
    if stat.S_ISDIR(mode):
        raise ToolFailure(ErrorCode.NOT_A_FILE, f"'{shown}' is a folder, not a file")
    if not stat.S_ISREG(mode):
        raise _refused(f"'{shown}' is {_kind(mode)}; only regular files are read")
    if info.st_nlink > 1:
        raise _refused(f"'{shown}' has several hard links; it may be a file from outside")
    return info


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refused(message: str) -> ToolFailure:
    return ToolFailure(ErrorCode.PATH_REFUSED, message)
