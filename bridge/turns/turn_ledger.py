"""What one turn's model requests cost, counted as they happen: the turn's token totals, the
metrics and the budgets.

Every request is reserved at its worst case before it is sent (a request that could pass a
budget is never sent) and settled with what it used once it ended: the provider's report, or
an estimate marked so. A request that ended without an answer is billed too (`billing`): its
failed attempts that streamed, and the attempt a stop cut short. The engine calls this module
at those three points and keeps nothing of the accounting itself.
"""

from __future__ import annotations

import functools
import logging

from bridge.errors import StoreError
from bridge.executors import Pool, run_in
from bridge.metrics import NO_TIER, BridgeMetrics
from bridge.providers.events import Completed, Usage
from bridge.store.usage import UsageDetail
from bridge.turns.billing import ANSWERED, FAILED, STOPPED, RequestMeter, estimated_cost
from bridge.turns.ports import BudgetHold, TurnContext, TurnSnapshot
from bridge.turns.tokens import raw_tokens

log = logging.getLogger(__name__)

SHRUNK_OUTPUT_FLOOR = 256
"""A budget with less room than a request's worst case still lets it go with its output cap
cut to fit, as long as the answer may be at least this long (or the cap, if smaller)."""


class BudgetRefused(Exception):
    """The reservation was refused: ``key`` names the budget line, ``values`` its figures."""

    def __init__(self, key: str, values: dict[str, str]) -> None:
        super().__init__(f"budget: {key} ({values.get('used', '?')}/{values.get('limit', '?')})")
        self.key = key
        self.values = values


class TurnLedger:
    """The accounting of one turn. ``model_ref`` is read at each bill, because a fallback
    may take over the turn between two requests."""

    def __init__(
        self, context: TurnContext, snapshot: TurnSnapshot, metrics: BridgeMetrics | None
    ) -> None:
        self._context = context
        self._budget = snapshot.budget
        self._metrics = metrics
        self.tier = snapshot.budget.tier if snapshot.budget is not None else NO_TIER
        """The budget tier of the asker (the metrics' label): ``guest`` without one."""
        self.tokens = 0
        """Tokens the turn's model responses used (reported, or estimated where not)."""
        self.estimated_tokens = 0

    async def reserve(self, prompt: int, output_cap: int) -> tuple[BudgetHold, int]:
        """Hold a request's worst case (``prompt`` and ``output_cap``, 0 for none) from the
        asker's budgets, and the output cap the request may then have: the same, or less where
        only a shorter answer fits (never below `SHRUNK_OUTPUT_FLOOR`). Raises `BudgetRefused`.
        An unreadable ledger lets the request go (it must not stop every turn) and says so."""
        budget = self._budget
        if budget is None:
            return BudgetHold(), output_cap
        worst = prompt + output_cap
        least = prompt + min(output_cap, SHRUNK_OUTPUT_FLOOR) if output_cap else None
        try:
            hold = await run_in(Pool.BUDGET, budget.reserve, self._context.player, worst, least)
        except StoreError as exc:
            log.error("budget of turn %s not checked: %s", self._context.turn_id, exc)
            return BudgetHold(), output_cap
        if hold.refusal is not None:
            key, values = hold.refusal
            if self._metrics is not None:
                self._metrics.budget_refusal(budget=key, tier=budget.tier)
            raise BudgetRefused(key, values)
        if output_cap and hold.tokens is not None and hold.tokens < worst:
            return hold, max(1, hold.tokens - prompt)
        return hold, output_cap

    async def answered(
        self,
        completed: Completed,
        prompt: int,
        hold: BudgetHold,
        meter: RequestMeter,
        model_ref: str,
    ) -> None:
        """Count what one answered request used, and every attempt before it that failed
        after it began to stream. ``prompt`` is the calibrated estimate of its input."""
        await self._served_failures(meter, prompt, model_ref)
        await self._bill_answer(completed, prompt, ANSWERED, model_ref, hold)

    async def unfinished(
        self, hold: BudgetHold, meter: RequestMeter, prompt: int, model_ref: str
    ) -> None:
        """A request that ended without an answer: its served failed attempts, and the attempt
        a stop cut short (its prompt was sent, whatever it streamed), are billed. One stopped
        after its answer came (its provider's report in hand) is billed as reported."""
        await self._served_failures(meter, prompt, model_ref)
        if meter.answer is not None:
            await self._bill_answer(meter.answer, prompt, STOPPED, model_ref, hold)
            return
        running = meter.running
        if running is not None:
            input_tokens, output = estimated_cost(prompt, running)
            await self._bill(input_tokens, output, STOPPED, model_ref, hold)
        else:
            await self._bill(0, 0, FAILED, model_ref, hold)

    async def _bill_answer(
        self, answer: Completed, prompt: int, purpose: str, model_ref: str, hold: BudgetHold
    ) -> None:
        """A served answer: as its provider reported, or estimated where it reported nothing."""
        usage = answer.usage
        if usage is not None and usage.total_tokens > 0 and not usage.estimated:
            await self._bill(
                usage.input_tokens, usage.output_tokens, purpose, model_ref, hold, usage
            )
            return
        await self._bill(prompt, raw_tokens(answer.items), purpose, model_ref, hold)

    async def _served_failures(self, meter: RequestMeter, prompt: int, model_ref: str) -> None:
        for streamed in meter.served_failures:
            await self._bill(*estimated_cost(prompt, streamed), FAILED, model_ref)

    async def _bill(
        self,
        input_tokens: int,
        output_tokens: int,
        purpose: str,
        model_ref: str,
        hold: BudgetHold | None = None,
        reported: Usage | None = None,
    ) -> None:
        """One request's tokens in the turn's count, the metrics and the budgets (settling
        ``hold``); estimated unless ``reported``. Nothing to count still settles the hold."""
        tokens = input_tokens + output_tokens
        estimated = reported is None
        self.tokens += tokens
        if estimated:
            self.estimated_tokens += tokens
        if self._metrics is not None and tokens > 0:
            self._metrics.tokens_used(
                tier=self.tier,
                model=model_ref,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                cached_input_tokens=0 if reported is None else reported.cached_input_tokens,
                estimated=estimated,
                purpose=purpose,
            )
        budget = self._budget
        if budget is None:
            return
        player = self._context.player
        detail = UsageDetail(
            model=model_ref,
            tier=self.tier,
            input_tokens=input_tokens,
            cached_input_tokens=0 if reported is None else reported.cached_input_tokens,
            output_tokens=output_tokens,
        )
        try:
            if hold is None:
                if tokens > 0:
                    spend = functools.partial(
                        budget.spend, estimated=estimated, purpose=purpose, detail=detail
                    )
                    await run_in(Pool.BUDGET, spend, player, tokens)
            else:
                settle = functools.partial(
                    budget.settle, estimated=estimated, purpose=purpose, detail=detail
                )
                await run_in(Pool.BUDGET, settle, hold, player, tokens)
        except StoreError as exc:
            log.error("usage of turn %s not counted: %s", self._context.turn_id, exc)
