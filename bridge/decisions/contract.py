"""The contract every model decision runs under, per server.

- **Slots, no queue.** At most `MAX_IN_FLIGHT` decisions run at once; a line that finds none
  free is not queued: `DecisionContract.claim` says so at once and the caller's fallback (the
  classifier) decides it. A busy chat can never build a backlog of paid requests.
- **A timeout.** A decision that has not answered in `TIMEOUT_S` is abandoned (its request
  closed) and counts as a failure.
- **A circuit.** `FAILURES_TO_OPEN` failures in a row open it for `OPEN_S`: no request is
  made while it is open, every line goes to the fallback. After that one more failure opens it
  again; one success closes it.
- **One request.** The contract asks once; nothing here retries, so a decision never becomes a
  second paid request (the app's provider clients do not retry on their own either).
- **Not everything falls back.** A failure (an error, a timeout, a malformed answer) is
  `Unavailable`: the caller decides with its fallback. A cancellation (listen mode went off,
  the bridge stops) propagates as ``CancelledError``, and a permission error (the provider
  refused the key) is `Refused`: neither is turned into fallback work.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bridge.decisions.answer import DecisionAnswer, MalformedAnswer, parse_answer
from bridge.errors import MineclawError

log = logging.getLogger(__name__)

MAX_IN_FLIGHT = 4
TIMEOUT_S = 30.0
FAILURES_TO_OPEN = 3
OPEN_S = 10.0


class DecisionUnavailable(MineclawError):
    """The model could not decide (provider failure, broken stream): the fallback decides.
    ``reply``: what streamed before the failure, when anything did (the provider bills it)."""

    reply: ModelReply | None = None


class DecisionPermissionError(MineclawError):
    """The provider refused the request itself (key, permission): no fallback work."""


@dataclass(frozen=True, slots=True)
class ModelReply:
    """What the model said and what it cost; ``estimated`` when the provider reported no
    usage and the caller estimated the tokens."""

    text: str
    input_tokens: int
    output_tokens: int
    estimated: bool


Ask = Callable[[], Awaitable[ModelReply]]
"""One request to the decision model (the port `bridge.app` implements)."""


@dataclass(frozen=True, slots=True)
class Decided:
    answer: DecisionAnswer
    reply: ModelReply


@dataclass(frozen=True, slots=True)
class Unavailable:
    """No decision: the fallback decides. ``reply`` is set when a paid reply came back but
    was malformed (its tokens still count)."""

    reason: str
    reply: ModelReply | None = None


@dataclass(frozen=True, slots=True)
class Refused:
    """The provider refused the request: nobody decides, the line stays overheard."""

    reason: str


Outcome = Decided | Unavailable | Refused


class Claim:
    """A held slot; `DecisionContract.run` gives it back (or `DecisionContract.release`)."""

    __slots__ = ("released",)

    def __init__(self) -> None:
        self.released = False


class DecisionContract:
    """``clock``: monotonic seconds (the circuit's); tests and the bench pass their own."""

    def __init__(
        self,
        *,
        max_in_flight: int = MAX_IN_FLIGHT,
        timeout_s: float = TIMEOUT_S,
        failures_to_open: int = FAILURES_TO_OPEN,
        open_s: float = OPEN_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_in_flight = max_in_flight
        self.timeout_s = timeout_s
        self._failures_to_open = failures_to_open
        self._open_s = open_s
        self._clock = clock
        self._in_flight = 0
        self._failures = 0
        self._open_until: float | None = None

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def circuit_open(self) -> bool:
        until = self._open_until
        if until is None:
            return False
        if self._clock() < until:
            return True
        # Half open: the next request is tried, and one more failure opens the circuit again.
        self._open_until = None
        self._failures = self._failures_to_open - 1
        return False

    def unavailable_now(self) -> str | None:
        """Why a line cannot be given to the model now (None: it can)."""
        if self.circuit_open:
            return "circuit open"
        if self._in_flight >= self.max_in_flight:
            return "no free slot"
        return None

    def claim(self) -> Claim | None:
        """A slot for one decision, or None (circuit open, every slot taken): decide with the
        fallback now. Synchronous, so the chat path claims with no await in between."""
        if self.unavailable_now() is not None:
            return None
        self._in_flight += 1
        return Claim()

    async def run(self, claim: Claim, ask: Ask) -> Outcome:
        """Ask once, within the timeout; the slot is given back whatever happens. Raises
        ``CancelledError`` when cancelled (not a failure, and no fallback)."""
        try:
            try:
                async with asyncio.timeout(self.timeout_s):
                    reply = await ask()
            except TimeoutError:
                return self._failed(f"no answer in {self.timeout_s:g} s")
            except DecisionPermissionError as exc:
                self._failure()
                return Refused(str(exc))
            except DecisionUnavailable as exc:
                return self._failed(str(exc), exc.reply)
            except MineclawError as exc:
                return self._failed(str(exc))
            except Exception:  # a bug in the port must not cost the line: the fallback decides
                log.exception("listen decision failed")
                return self._failed("internal error")
            try:
                answer = parse_answer(reply.text)
            except MalformedAnswer as exc:
                return self._failed(f"malformed answer: {exc}", reply)
            self._failures = 0
            self._open_until = None
            return Decided(answer, reply)
        finally:
            self.release(claim)

    def release(self, claim: Claim) -> None:
        """Give a slot back (once; later calls do nothing). `run` does it when it ends; the
        owner of a task cancelled before it ever ran must do it (a done callback)."""
        if not claim.released:
            claim.released = True
            self._in_flight -= 1

    def _failed(self, reason: str, reply: ModelReply | None = None) -> Unavailable:
        self._failure()
        return Unavailable(reason, reply)

    def _failure(self) -> None:
        self._failures += 1
        if self._failures >= self._failures_to_open:
            if self._open_until is None:
                log.warning(
                    "listen decisions: %d failures in a row, the classifier decides for %g s",
                    self._failures,
                    self._open_s,
                )
            self._open_until = self._clock() + self._open_s
