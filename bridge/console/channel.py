"""The console process's channel to the bridge that started it.

The console serves its pages in a process of its own (`bridge.console.child`) and reads the
store itself; the few things it does that change the bridge's state (accept a review, forget
a memory, redeem a login link) or that only the running bridge knows (what runs now, which
version of the folder it serves) it asks the bridge for here.

The channel is loopback TCP with a token: the bridge listens on 127.0.0.1 on a free port and
hands the port and a fresh 32-byte token to the child on its standard input (never its command
line, which every local user can read). Each side writes one JSON object a line, at most
`MAX_FRAME` bytes; the console's first line carries the token, and a wrong one closes the
connection before any action is read. Every frame is parsed into the models below, which bound
every string, so what a stranger on this machine sends is refused where it is parsed.
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from bridge.errors import MineclawError

MAX_FRAME = 64 * 1024
"""The longest line either side sends or reads (a status view is a few kilobytes)."""
CALL_TIMEOUT_S = 30.0
"""How long the console waits for an answer (a review republishes every server's plane)."""

Name = Annotated[str, Field(min_length=1, max_length=64)]


class ConsoleError(MineclawError):
    """The console could not start (a port in use, a certificate that does not load)."""


class ChannelError(MineclawError):
    """The bridge did not answer, or answered what the channel does not carry."""


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Hello(_Frame):
    token: str = Field(min_length=1, max_length=128)


class ReviewAction(_Frame):
    action: Literal["review"] = "review"
    name: Name
    reviewer: Name


class ForgetAction(_Frame):
    action: Literal["forget"] = "forget"
    memory_id: Name
    who: Name


class RedeemAction(_Frame):
    action: Literal["redeem"] = "redeem"
    token: str = Field(max_length=256)


class StatusAction(_Frame):
    action: Literal["status"] = "status"


class VersionAction(_Frame):
    action: Literal["version"] = "version"


Action = Annotated[
    ReviewAction | ForgetAction | RedeemAction | StatusAction | VersionAction,
    Field(discriminator="action"),
]
ACTION: TypeAdapter[Action] = TypeAdapter(Action)


class Reply(_Frame):
    ok: bool
    value: Any = None
    error: Literal["unknown", "refused", "failed"] | None = None
    """``unknown``: no such Function; ``refused``: a frame the bridge does not take;
    ``failed``: the bridge could not do it (the store, a bug), said in ``message``."""
    message: str = Field(default="", max_length=2000)


class ChildStart(_Frame):
    """The line the bridge writes on the console process's standard input."""

    config_dir: str = Field(min_length=1, max_length=4096)
    channel_port: int = Field(ge=1, le=65535)
    token: str = Field(min_length=1, max_length=128)
    port: int | None = Field(default=None, ge=0, le=65535)
    """The port to serve on (None: ``console.port``; 0: a free one, for tests and benches)."""


MAX_START_LINE = 16 * 1024


def encode(frame: _Frame) -> bytes:
    line = frame.model_dump_json().encode() + b"\n"
    if len(line) > MAX_FRAME:
        raise ChannelError(f"a {type(frame).__name__} frame over {MAX_FRAME} bytes")
    return line


class BridgeChannel:
    """The console's end: one connection, opened at the first call and again after a failure;
    calls from the console's threads take turns. Blocking."""

    def __init__(self, port: int, token: str, *, timeout_s: float = CALL_TIMEOUT_S) -> None:
        self._port = port
        self._token = token
        self._timeout_s = timeout_s
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._reader: Any = None

    def call(self, action: _Frame) -> Any:
        """The value the bridge answers ``action`` with. Raises `KeyError` when the bridge
        knows no such Function, `ChannelError` when it cannot be asked or could not do it."""
        with self._lock:
            try:
                reply = self._exchange(encode(action))
            except (OSError, ValueError, ValidationError) as exc:
                self._drop()
                raise ChannelError(f"the bridge did not answer the console: {exc}") from exc
        if reply.ok:
            return reply.value
        if reply.error == "unknown":
            raise KeyError(reply.message)
        raise ChannelError(reply.message or "the bridge refused the console's request")

    def _exchange(self, line: bytes) -> Reply:
        if self._sock is None:
            sock = socket.create_connection(("127.0.0.1", self._port), timeout=self._timeout_s)
            self._sock, self._reader = sock, sock.makefile("rb")
            sock.sendall(encode(Hello(token=self._token)))
        assert self._sock is not None
        self._sock.sendall(line)
        answer = self._reader.readline(MAX_FRAME + 1)
        if not answer.endswith(b"\n"):
            raise ValueError("the bridge closed the channel" if not answer else "a long frame")
        return Reply.model_validate(json.loads(answer))

    def _drop(self) -> None:
        if self._sock is not None:
            self._reader.close()
            self._sock.close()
        self._sock = self._reader = None

    def close(self) -> None:
        with self._lock:
            self._drop()
