"""The pipe protocol between the bridge and a Function worker process.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON: one of the
models below, told apart by `type` and carrying the protocol version `v`. The bridge writes to
the worker's stdin and reads its stdout; stderr carries only diagnostics (V8's fatal-error
report), which the bridge keeps a bounded tail of.

The bridge asks (`eval`, `terminate`, `release`); the worker answers every `eval` exactly once
with an `answer` of the same `seq`, and says `ready` once after its self-check. Nothing the
worker sends is trusted: an answer's `error_code` is mapped to a sandbox error only if it is one
of the few the worker may report, and every limit is enforced again by the bridge.
"""

from __future__ import annotations

import struct
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from bridge.errors import FunctionError

VERSION: Literal[1] = 1
"""Bumped on any incompatible change; a worker of another version is refused at `ready`."""

MAX_FRAME_BYTES = 64 * 1024 * 1024
"""Larger frames end the connection: an honest driver's state is far smaller (see
`Invocation._read_state`, which caps it again by the call's limits)."""

MAX_VALUE_CHARS = MAX_FRAME_BYTES // 6 - 8_192
"""The longest value an answer may carry: JSON escapes a character in at most 6 bytes."""


def answer_cap(value_chars: int) -> int:
    """The largest answer frame a value of `value_chars` characters can make (every character
    escaped, plus the frame's other fields); the bridge reads no larger answer."""
    return min(MAX_FRAME_BYTES, 6 * value_chars + 8_192)


_HEADER = struct.Struct(">I")
HEADER_BYTES = _HEADER.size


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    v: Literal[1] = VERSION


class Eval(_Frame):
    """Run `script` as one synchronous segment of the current call's isolate.

    The first `eval` after a `release` (or at start) opens a fresh isolate whose heap is capped
    at `heap_bytes`; the worker stops the segment itself after `timeout_ms`.
    """

    type: Literal["eval"] = "eval"
    seq: int = Field(ge=0)
    script: str
    timeout_ms: int = Field(ge=1, le=3_600_000)
    heap_bytes: int = Field(ge=1)
    follow: str | None = None
    """Evaluated after `script`, each time as a segment of its own, while it produces
    `repeat_while` (at most `follow_limit` times); the answer is its last value."""
    repeat_while: str = ""
    follow_limit: int = Field(default=1, ge=1, le=10_000)
    value_chars: int = Field(default=MAX_VALUE_CHARS, ge=1, le=MAX_VALUE_CHARS)
    """The longest value the answer may carry: the worker refuses a longer one itself, by its
    length, with `result_too_large` (it is never encoded or sent)."""


class Terminate(_Frame):
    """Stop the segment `seq` now (the workflow ended or was cancelled)."""

    type: Literal["terminate"] = "terminate"
    seq: int = Field(ge=0)


class Release(_Frame):
    """The call is over: dispose of its isolate and make the next one ahead."""

    type: Literal["release"] = "release"


class Ready(_Frame):
    """The worker started, set its OS limits and passed the isolation self-check."""

    type: Literal["ready"] = "ready"
    pid: int
    confinement: dict[str, str] = Field(default_factory=dict, max_length=16)
    """Each OS confinement layer: "on", or "unavailable: why" (`worker_confinement`)."""


class Answer(_Frame):
    """The outcome of `eval` `seq`: `value` when `ok`, else `error_code` and `message`."""

    type: Literal["answer"] = "answer"
    seq: int = Field(ge=0)
    ok: bool
    value: str | None = None
    error_code: str | None = Field(default=None, max_length=64)
    message: str = Field(default="", max_length=4_000)


class Fatal(_Frame):
    """The worker cannot serve (V8 would not start or failed its self-check); it exits next."""

    type: Literal["fatal"] = "fatal"
    message: str = Field(max_length=4_000)


ToWorker = Annotated[Eval | Terminate | Release, Field(discriminator="type")]
FromWorker = Annotated[Ready | Answer | Fatal, Field(discriminator="type")]
_TO_WORKER: TypeAdapter[Eval | Terminate | Release] = TypeAdapter(ToWorker)
_FROM_WORKER: TypeAdapter[Ready | Answer | Fatal] = TypeAdapter(FromWorker)


class FrameError(FunctionError):
    """A frame was too large or not one of the models above."""


def encode(frame: _Frame) -> bytes:
    """Length prefix plus JSON body."""
    body = frame.model_dump_json().encode()
    if len(body) > MAX_FRAME_BYTES:
        raise FrameError(f"frame of {len(body)} bytes, over {MAX_FRAME_BYTES}")
    return _HEADER.pack(len(body)) + body


def body_length(header: bytes, cap: int = MAX_FRAME_BYTES) -> int:
    """The body length a header announces; `FrameError` if it is over `cap`, before a byte of
    the body is read."""
    (length,) = _HEADER.unpack(header)
    if length > cap:
        raise FrameError(f"frame of {length} bytes announced, over {cap}")
    return int(length)


def decode_to_worker(body: bytes) -> Eval | Terminate | Release:
    try:
        return _TO_WORKER.validate_json(body)
    except ValidationError as exc:
        raise FrameError(f"malformed frame: {exc.errors()[:1]}") from None


def decode_from_worker(body: bytes) -> Ready | Answer | Fatal:
    try:
        return _FROM_WORKER.validate_json(body)
    except ValidationError as exc:
        raise FrameError(f"malformed frame: {exc.errors()[:1]}") from None
