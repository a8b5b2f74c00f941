"""The budget side of a one-off model request nobody asked for (a listen decision, a
conversation title): its worst case held from the server's budget before it is sent, and what
it used settled under its own purpose after, never from a player's budget."""

from __future__ import annotations

import logging

from bridge.app.requests.port import RequestPort
from bridge.decisions.contract import ModelReply
from bridge.errors import MineclawError
from bridge.metrics import NO_TIER
from bridge.policy.budgets import NOTHING_HELD, BudgetRefusal, Reservation
from bridge.store.usage import UsageDetail
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
