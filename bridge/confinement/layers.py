"""The layers themselves: ``no_new_privs``, Landlock over paths (and TCP when asked), a drop to
``nobody`` when the bridge runs as root. Each returns ``ON`` (perhaps with a detail) or
``unavailable: why``; none raises."""

from __future__ import annotations

import ctypes
import errno
import os
import pwd
import struct
from collections.abc import Iterable

ON = "on"
PR_SET_NO_NEW_PRIVS = 38

_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 14, 1 << 15
# Every file-system right of each ABI (1: thirteen, 2: refer, 3: truncate, 5: ioctl on devices).
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV
"""The rights that apply to a file (not a folder): Landlock refuses a rule on a file with more."""
_NET_ALL = 0b11  # bind and connect over TCP (ABI 4)
_SCOPED_ALL = 0b11  # abstract Unix sockets and signals outside the domain (ABI 6)


def libc() -> ctypes.CDLL:
    found = ctypes.CDLL(None, use_errno=True)
    found.syscall.restype = ctypes.c_long
    found.prctl.restype = ctypes.c_int
    return found


def os_error(what: str) -> str:
    code = ctypes.get_errno()
    return f"unavailable: {what} failed ({errno.errorcode.get(code, code)})"


def no_new_privs() -> str:
    """Nothing this process runs can gain privileges (setuid binaries, file capabilities)."""
    if libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return os_error("prctl(PR_SET_NO_NEW_PRIVS)")
    return ON


def describe(layers: dict[str, str]) -> str:
    """One line: `name state` for each layer."""
    return ", ".join(f"{name} {state}" for name, state in layers.items())


class _LandlockRuleset(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


def landlock(
    readable: Iterable[str], writable: Iterable[str] = (), *, deny_tcp: bool = False
) -> str:
    """From now on this process (and whatever it executes) reads and executes only beneath
    ``readable``, writes, creates and deletes only beneath ``writable``; TCP bind and connect
    are refused too with ``deny_tcp``; signals and abstract sockets stay in the domain where the
    kernel can scope them (ABI 6). Paths that do not exist are skipped. Needs no_new_privs (or
    CAP_SYS_ADMIN)."""
    lib = libc()
    abi = lib.syscall(_SYS_LANDLOCK_CREATE_RULESET, None, 0, _LANDLOCK_CREATE_RULESET_VERSION)
    if abi < 1:
        return os_error("landlock_create_ruleset")
    fs = _FS_BY_ABI[max(level for level in _FS_BY_ABI if level <= abi)]
    net = _NET_ALL if deny_tcp and abi >= 4 else 0
    attr = _LandlockRuleset(fs, net, _SCOPED_ALL if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = lib.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        return os_error("landlock_create_ruleset")
    read_rights = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
    rules = [(path, read_rights) for path in readable] + [(path, fs) for path in writable]
    try:
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    rights &= _FILE_RIGHTS
                # struct landlock_path_beneath_attr: __u64 allowed_access; __s32 parent_fd (packed)
                rule = struct.pack("=Qi", rights & fs, fd)
                buffer = ctypes.create_string_buffer(rule, len(rule))
                if lib.syscall(
                    _SYS_LANDLOCK_ADD_RULE, ruleset, _LANDLOCK_RULE_PATH_BENEATH, buffer, 0
                ):
                    return os_error(f"landlock_add_rule({path})")
            finally:
                os.close(fd)
        if lib.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
            return os_error("landlock_restrict_self")
    finally:
        os.close(ruleset)
    return f"{ON} (ABI {abi})"


def unprivileged_user() -> pwd.struct_passwd | None:
    """`nobody`, looked up before Landlock hides `/etc`; None when not running as root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        return None


def drop_user(nobody: pwd.struct_passwd | None, what: str = "the worker") -> str:
    if os.geteuid() != 0:
        return f"unavailable: the bridge does not run as root ({what} runs as its user)"
    if nobody is None:
        return "unavailable: no user named nobody"
    try:
        os.setgroups([])
        os.setresgid(nobody.pw_gid, nobody.pw_gid, nobody.pw_gid)
        os.setresuid(nobody.pw_uid, nobody.pw_uid, nobody.pw_uid)
    except OSError as exc:
        return f"unavailable: {exc}"
    return f"{ON} (nobody, uid {nobody.pw_uid})"
