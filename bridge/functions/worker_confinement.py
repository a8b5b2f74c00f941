"""OS confinement of a Function worker, layer by layer, beneath V8's own isolation.

V8 is the first barrier; these assume it broke (a V8 bug gives the script native code in the
worker) and limit what the worker process itself can then do. Each layer reports "on" or
"unavailable: why"; the worker sends the report in its `ready` frame, and the bridge states it
at start and in `/mineclaw status`.

- `no_new_privs` (prctl): nothing the worker runs can gain privileges (setuid binaries, file
  capabilities). Set first, on the only thread, so every thread inherits it; Landlock and
  seccomp need it.
- `landlock`: before V8 loads, the file system shrinks to reading the Python installation and
  the system libraries; nothing can be written, created, renamed or deleted anywhere, and the
  bridge's configuration and data folders cannot even be read. Set on the only thread, so
  every thread V8 starts inherits it.
- `user`: when the bridge runs as root, the worker drops to `nobody` (no groups, no
  capabilities) once V8 is up: it cannot signal the bridge or read its `/proc` entries.
- `descriptors`: only the protocol pipes (stdin, stdout, stderr) and the event loops' own
  wake-up channels stay open; any other descriptor is closed.
- `seccomp`: once V8 is up, a filter on every thread allows only the system calls V8, Python
  and the pipes need (memory, threads, futexes, polling, reading and writing open
  descriptors); every other call fails with EPERM: no open of a file, no socket or connect, no
  fork or exec, no signal to another process, no ptrace.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import sys

from bridge.confinement.layers import (
    ON,
    describe,
    drop_user,
    libc,
    no_new_privs,
    os_error,
    unprivileged_user,
)
from bridge.confinement.layers import landlock as restrict_paths

__all__ = ["ON", "describe", "drop_user", "no_new_privs", "unprivileged_user"]

PR_SET_DUMPABLE = 4

_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_FLTATR_CTL_TSYNC = 4
_SCMP_CMP_EQ = 4
_SCMP_CMP_MASKED_EQ = 7
_CLONE_THREAD = 0x00010000

# What V8, Python's event loops and the pipes need once the worker is up. No call that names a
# path, makes a descriptor to anything new, starts a process or reaches another process.
SECCOMP_ALLOWED = (
    "read write readv writev pread64 pwrite64 close close_range fstat fstatfs newfstatat "
    "statx lseek mmap munmap mprotect mremap madvise brk msync mincore mlock munlock "
    "rt_sigaction rt_sigprocmask rt_sigreturn rt_sigtimedwait sigaltstack restart_syscall "
    "futex futex_waitv set_robust_list get_robust_list rseq set_tid_address "
    "exit exit_group getpid gettid getppid getuid geteuid getgid getegid getresuid "
    "getresgid getgroups sched_yield sched_getaffinity sched_setaffinity sched_getparam "
    "sched_getscheduler sched_setscheduler sched_getattr sched_setattr "
    "sched_get_priority_max sched_get_priority_min getcpu getrandom clock_gettime "
    "clock_getres clock_nanosleep nanosleep gettimeofday time epoll_create1 epoll_ctl "
    "epoll_wait epoll_pwait epoll_pwait2 eventfd2 poll ppoll select pselect6 getrusage "
    "prlimit64 getrlimit setpriority getpriority ioctl fcntl dup dup3 prctl membarrier "
    "uname sysinfo times pkey_alloc pkey_free pkey_mprotect recvfrom sendto recvmsg "
    "sendmsg getsockopt getsockname arch_prctl"
).split()
SELF_SIGNALS = ("kill", "tkill", "tgkill")


BRIDGE_LAYERS: dict[str, str] = {}
"""The bridge process's own layer (`not_dumpable`), as `serve` set it."""


def not_dumpable() -> str:
    """For the bridge itself: same-user processes cannot read its `/proc` entries (its
    environment holds the provider keys) or attach to it. Workers are started by exec, which
    makes them dumpable again, so the bridge still reads their `/proc` entries."""
    if libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        state = os_error("prctl(PR_SET_DUMPABLE)")
    else:
        state = ON
    BRIDGE_LAYERS["not_dumpable"] = state
    return state


def _readable_roots() -> list[str]:
    """What the worker reads after Landlock: Python (the virtual environment, the installation
    it was made from, the bridge's own package, not the folder around it), the system's shared
    libraries and time zones, and its own `/proc` entries."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, package}
    roots |= {os.path.dirname(os.path.realpath(sys.executable))}
    roots |= {"/usr/lib", "/lib", "/lib64", "/usr/share/zoneinfo", "/etc/localtime"}
    roots |= {"/proc/self", "/sys/devices/system/cpu"}
    return sorted(root for root in roots if os.path.exists(root))


def landlock() -> str:
    """Reading Python and the system's libraries only; no write, no TCP."""
    return restrict_paths(_readable_roots(), deny_tcp=True)


def close_descriptors() -> str:
    """Close every descriptor beyond the pipes that is not an event loop's own (a socket pair,
    an eventfd, an epoll): anything with a name in the file system."""
    closed = 0
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd <= 2:
            continue
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            continue
        if stat.S_ISSOCK(mode) or stat.S_ISFIFO(mode):
            continue  # the loops' wake-up pairs (the protocol pipes are 0-2)
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISCHR(mode)):
            continue  # anonymous inodes: eventfd, epoll
        os.close(fd)
        closed += 1
    return ON if not closed else f"{ON} ({closed} closed)"


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


def load_libseccomp() -> ctypes.CDLL | None:
    """libseccomp, loaded before Landlock hides the loader's cache; None when not installed."""
    try:
        return ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError:
        return None


def seccomp(lib: ctypes.CDLL | None) -> str:
    if lib is None:
        return "unavailable: libseccomp is not installed (Debian: libseccomp2)"
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(0x00050000 | errno.EPERM)  # SCMP_ACT_ERRNO(EPERM)
    if not ctx:
        return "unavailable: seccomp_init failed"
    try:

        def allow(syscall: str, *conditions: _ArgCmp) -> None:
            number = lib.seccomp_syscall_resolve_name(syscall.encode())
            if number < 0:
                return  # not a call on this architecture
            array = (_ArgCmp * max(1, len(conditions)))(*conditions)
            if lib.seccomp_rule_add_array(ctx, _SCMP_ACT_ALLOW, number, len(conditions), array):
                raise OSError(f"seccomp_rule_add({syscall})")

        for syscall in SECCOMP_ALLOWED:
            allow(syscall)
        # Threads only: clone with CLONE_THREAD. clone3 passes its flags in memory, which a
        # filter cannot read: it answers ENOSYS, and glibc then starts threads with clone.
        allow("clone", _ArgCmp(0, _SCMP_CMP_MASKED_EQ, _CLONE_THREAD, _CLONE_THREAD))
        clone3 = lib.seccomp_syscall_resolve_name(b"clone3")
        if clone3 >= 0 and lib.seccomp_rule_add_array(
            ctx, 0x00050000 | errno.ENOSYS, clone3, 0, (_ArgCmp * 1)()
        ):
            raise OSError("seccomp_rule_add(clone3)")
        pid = os.getpid()
        for syscall in SELF_SIGNALS:  # the first argument is the target (tgid for tgkill)
            allow(syscall, _ArgCmp(0, _SCMP_CMP_EQ, pid, 0))
        if lib.seccomp_attr_set(ctx, _SCMP_FLTATR_CTL_TSYNC, 1):
            return "unavailable: seccomp cannot cover every thread (TSYNC)"
        if lib.seccomp_load(ctx):
            return "unavailable: seccomp_load failed"
    except OSError as exc:
        return f"unavailable: {exc}"
    finally:
        lib.seccomp_release(ctx)
    return ON
