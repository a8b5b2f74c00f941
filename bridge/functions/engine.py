"""The one interface the runtime needs from a JavaScript engine.

An `Engine` runs an invocation's driver and hands out fresh sandboxes, each already hardened
and carrying the driver from `prelude.py`. A `Sandbox` evaluates script text within a time
limit and returns the string (or nothing) the script produced. Everything else (limits,
capabilities, the outbox protocol) is engine-independent and lives in the runtime, so
swapping V8 for another engine means one new module implementing these two protocols.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, Protocol, TypeVar

from bridge.errors import FunctionError

T = TypeVar("T")


class SandboxError(FunctionError):
    """A sandbox evaluation did not produce a value. `code` is the stable result code.

    `lost` describes the worker process that was killed or died with this error (for the audit
    log); `None` when the isolate simply reported the error.
    """

    code = "script_error"
    lost: dict[str, str | int | None] | None = None


class SandboxScriptError(SandboxError):
    """The script threw, or did not parse."""

    code = "script_error"


class SandboxTimeout(SandboxError):
    """One synchronous segment ran past its limit and was terminated."""

    code = "sync_time_limit"


class SandboxMemoryLimit(SandboxError):
    """The isolate's heap reached its limit and the isolate was terminated."""

    code = "memory_limit"


class SandboxProtocolError(SandboxError):
    """The script returned something other than a string or nothing."""

    code = "protocol_error"


class EngineCrashed(SandboxError):
    """The process hosting the isolate died (V8 fatal error, a signal, its CPU limit)."""

    code = "engine_crashed"


class EngineUnavailable(SandboxError):
    """The engine could not start, or failed its isolation self-check."""

    code = "engine_unavailable"


class SandboxResultTooLarge(SandboxError):
    """A segment produced a value longer than the runtime reads (refused by its length)."""

    code = "result_too_large"


class WorkersBusy(SandboxError):
    """No worker became free for the call in time (the pool, or the player's share, was full)."""

    code = "workers_busy"


class Sandbox(Protocol):
    """One isolated JavaScript context, used for exactly one invocation, then disposed."""

    async def evaluate(self, script: str, *, timeout_s: float) -> str | None:
        """Run `script` as one synchronous segment; raise a `SandboxError` subclass on failure.

        The script's completion value must be a string or undefined. Cancelling the awaiting
        task terminates the running JavaScript.
        """

    async def evaluate_then(
        self, script: str, follow: str, *, timeout_s: float, repeat_while: str, limit: int
    ) -> str | None:
        """`script`, then `follow` (each one segment) until `follow` produces something other
        than `repeat_while` or has run `limit` times; the last value of `follow`.

        One exchange where the engine is in another process: the runtime's steps ride along
        with the segment they follow instead of costing a round trip each.
        """

    async def dispose(self) -> None:
        """Terminate anything still running and free the context. Safe to call twice."""


class Engine(Protocol):
    """A source of fresh sandboxes."""

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run an invocation's driver where this engine's sandboxes are cheapest to reach.

        Cancelling the caller cancels `work`. An engine without a thread of its own just
        awaits it.
        """

    async def fresh(
        self,
        *,
        heap_bytes: int,
        memory_bytes: int | None = None,
        tenant: str = "",
        value_chars: int | None = None,
    ) -> Sandbox:
        """A new hardened sandbox whose heap is capped at `heap_bytes`.

        `value_chars` is the longest value a segment may produce; longer ones raise
        `SandboxResultTooLarge`, checked where the engine can do so before the value is
        carried anywhere.

        `memory_bytes` caps the resident memory of the process hosting the isolate, where the
        engine can measure it (an engine in the bridge's own process cannot). `tenant` names
        who the call is for (the player), where the engine shares its capacity among them.
        """

    async def aclose(self) -> None:
        """Dispose of every sandbox made ahead and stop the engine."""
