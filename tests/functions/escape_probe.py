"""Run inside a confined Function worker by `test_confinement.py`: the stand-in for native code
after a V8 escape. Not a module: the worker executes this text with `results` (a dict to fill),
`stage` ("before_seccomp" or "confined") and `layers` (the layers set so far) in scope.

Each attempt is recorded as "allowed" or "refused: ERRNO". Targets come from the environment the
test starts this worker with: the bridge's pid (the test process), an audit database and a
config folder, and a loopback port something listens on.
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import socket
import threading
from collections.abc import Callable

# Set by the worker that runs this text (see the docstring).
results: dict[str, str] = globals()["results"]
stage: str = globals()["stage"]


def attempt(name: str, action: Callable[[], object]) -> None:
    try:
        action()
    except OSError as exc:
        results[name] = f"refused: {errno.errorcode.get(exc.errno, exc.errno)}"
    else:
        results[name] = "allowed"


def read_bridge_environment() -> None:
    with open(f"/proc/{os.environ['PROBE_BRIDGE_PID']}/environ", "rb") as environ:
        environ.read()


def open_new_file() -> None:
    with open(os.environ["PROBE_CONFIG_FILE"], "rb") as config:
        config.read()


def create_file() -> None:
    os.close(os.open(os.environ["PROBE_NEW_FILE"], os.O_CREAT | os.O_WRONLY, 0o600))


def truncate_audit_database() -> None:
    os.truncate(os.environ["PROBE_AUDIT_DB"], 0)


def open_socket() -> None:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()


def connect_loopback() -> None:
    # Through the C library, as native code would: socket(2) then connect(2).
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "socket")
    port = int(os.environ["PROBE_PORT"])
    address = bytes([2, 0, port >> 8, port & 0xFF, 127, 0, 0, 1]) + bytes(8)
    if libc.connect(fd, address, len(address)) != 0:
        raise OSError(ctypes.get_errno(), "connect")


def signal_the_bridge() -> None:
    os.kill(int(os.environ["PROBE_BRIDGE_PID"]), 0)  # signal 0: only whether it may


def fork() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def exec_a_program() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    argv = (ctypes.c_char_p * 2)(b"/bin/true", None)
    libc.execv(b"/bin/true", argv)  # returns only when refused
    raise OSError(ctypes.get_errno(), "execv")


def rename_config() -> None:
    os.rename(os.environ["PROBE_CONFIG_FILE"], os.environ["PROBE_CONFIG_FILE"] + ".moved")


attempt("read_bridge_environment", read_bridge_environment)
attempt("open_config", open_new_file)
attempt("create_file", create_file)
attempt("truncate_audit_database", truncate_audit_database)
attempt("rename_config", rename_config)
attempt("signal_the_bridge", signal_the_bridge)
if stage == "confined":
    attempt("open_socket", open_socket)
    attempt("connect_loopback", connect_loopback)
    attempt("fork", fork)
    attempt("exec", exec_a_program)
results["uid"] = str(os.getuid())
results["no_new_privs"] = str(ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))  # PR_GET_NO_NEW_PRIVS
# Its own signals still work (V8 and Python need them): signal 0 to itself, and a blocked
# signal to this thread (left pending).
attempt("signal_self", lambda: os.kill(os.getpid(), 0))
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
attempt("signal_own_thread", lambda: signal.pthread_kill(threading.get_ident(), signal.SIGUSR1))
