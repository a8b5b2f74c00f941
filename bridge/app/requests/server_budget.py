"""The budget side of a one-off model request nobody asked for (a listen decision, a
conversation title): its worst case held from the server's budget before it is sent, and what
it used settled under its own purpose after, never from a player's budget; and the tokens memory
vectors cost, the server's too (`count_embedding`)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from dataclasses import dataclass

from bridge.app.requests.port import RequestPort
from bridge.decisions.contract import ModelReply
from bridge.errors import MineclawError, StoreError
from bridge.executors import Pool, run_in
from bridge.metrics import NO_TIER
from bridge.policy.budgets import NOTHING_HELD, BudgetRefusal, Reservation
from bridge.store.usage import UsageDetail
from bridge.turns.billing import EMBEDDING
from bridge.turns.tokens import raw_tokens_of_text

log = logging.getLogger(__name__)


def reserve_for_server(
    runtime: RequestPort, instructions: str, document: str, max_output_tokens: int, what: str
) -> Reservation | None:
    """Hold the request's worst case (its prompt and output cap) from the server's budget;
    None when the budget cannot hold it or cannot be read (``what`` names it in the log)."""
    budgets = runtime.budgets
    if budgets is None:
        return NOTHING_HELD
    worst = raw_tokens_of_text(instructions) + raw_tokens_of_text(document)
    try:
        held = budgets.reserve(
            player_uuid=None,
            granted=None,
            config=runtime.plane.config.budgets,
            worst=worst + max_output_tokens,
        )
    except MineclawError as exc:  # an unreadable ledger: the request is not sent
        log.error("%s not reserved: %s", what, exc)
        return None
    return None if isinstance(held, BudgetRefusal) else held


def settle_for_server(
    runtime: RequestPort,
    held: Reservation,
    *,
    model_ref: str,
    reply: ModelReply,
    purpose: str,
    what: str,
) -> None:
    """Record what the request used for the server under ``purpose`` and let its reservation
    go. Blocking: run it in a worker thread."""
    budgets = runtime.budgets
    if budgets is None:
        return
    try:
        budgets.settle(
            held,
            player_uuid=None,
            player_name=None,
            tokens=reply.input_tokens + reply.output_tokens,
            estimated=reply.estimated,
            purpose=purpose,
            config=runtime.plane.config.budgets,
            detail=UsageDetail(
                model=model_ref,
                tier=NO_TIER,
                input_tokens=reply.input_tokens,
                cached_input_tokens=0,
                output_tokens=reply.output_tokens,
            ),
        )
    except MineclawError as exc:
        log.error("%s usage not recorded: %s", what, exc)


@dataclass(frozen=True, slots=True)
class _Served:
    held: Reservation
    model_ref: str
    reply: ModelReply


class BatchedSettle:
    """Settles the server's one-off requests (listen decisions) in batches, off the chat path.

    Recording a request's usage is a SQLite commit with an fsync; one worker thread per
    decision, up to 20 a second at 200 lines a second, put that many thread hand-offs and
    fsyncs beside the chat path and made the verdict's p99 twice the bare echo's
    (bench/listen_bench.py). Here what was served waits at most `FLUSH_S` and a whole batch
    is recorded by one worker thread; `flush` records what waits at once (`settled`, shutdown).
    Usage is never dropped: a batch that fails is logged per request by `settle_for_server`.
    """

    FLUSH_S = 1.0

    def __init__(self, runtime: RequestPort, *, purpose: str, what: str) -> None:
        self._runtime = runtime
        self._purpose = purpose
        self._what = what
        self._waiting: list[_Served] = []
        self._due = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def add(self, held: Reservation, model_ref: str, reply: ModelReply) -> None:
        """Record ``reply``'s usage within `FLUSH_S` and let ``held`` go then."""
        self._waiting.append(_Served(held, model_ref, reply))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write_soon())

    async def _write_soon(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._due.wait(), self.FLUSH_S)
        self._due.clear()
        batch, self._waiting = self._waiting, []
        # Shielded: a cancelled caller must not lose a batch a worker thread is writing.
        await asyncio.shield(run_in(Pool.BUDGET, self._write, batch))

    def _write(self, batch: list[_Served]) -> None:
        for served in batch:
            settle_for_server(
                self._runtime,
                served.held,
                model_ref=served.model_ref,
                reply=served.reply,
                purpose=self._purpose,
                what=self._what,
            )

    async def flush(self) -> None:
        """Record everything waiting now and wait until it is written."""
        while self._writer is not None and not self._writer.done():
            self._due.set()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._writer)
        if self._waiting:  # added while the last batch was written, its writer gone
            batch, self._waiting = self._waiting, []
            await run_in(Pool.BUDGET, self._write, batch)


async def count_embedding(host: RequestPort, model: str, tokens: int, estimated: bool) -> None:
    """Memory vectors are the server's cost, as a compaction is: counted in the metrics and
    the usage ledger under ``memory.embedding``, against the server's budget."""
    host.metrics.tokens_used(
        tier=NO_TIER,
        model=model,
        input_tokens=tokens,
        output_tokens=0,
        estimated=estimated,
        purpose=EMBEDDING,
    )
    budgets = host.budgets
    if budgets is None:
        return
    config = host.plane.config.budgets
    try:
        await run_in(
            Pool.BUDGET,
            functools.partial(
                budgets.record,
                player_uuid=None,
                player_name=None,
                tokens=tokens,
                estimated=estimated,
                config=config,
                purpose=EMBEDDING,
                detail=UsageDetail(
                    model=model,
                    tier=NO_TIER,
                    input_tokens=tokens,
                    cached_input_tokens=0,
                    output_tokens=0,
                ),
            ),
        )
    except StoreError as exc:
        log.error("memory embedding usage not counted: %s", exc)
