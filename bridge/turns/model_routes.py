"""One model request of a turn: its attempts on the route in force, then the snapshot's
fallback routes, with the answer streamed to the asker's action bar.

Each route (the snapshot's model, then its fallbacks) gets the attempts its retry policy allows
(`bridge.turns.attempts`). When they are spent with a failure a fallback may answer
(`FALLBACK_CLASSES`), the turn moves on to the next route for good (``progress.route``) and the
move is audited (``provider.fallback``); otherwise the turn is dropped with the player's line
for the last failure. Every failed attempt is audited (``provider.failure``) and counted; what
each attempt streamed is metered (`RequestMeter`), so a stopped or failed request is billed.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bridge.metrics import BridgeMetrics
from bridge.providers.events import Completed, Failed
from bridge.providers.failures import FALLBACK_CLASSES
from bridge.providers.items import ProviderRequest
from bridge.store.audit_sink import AuditSink
from bridge.turns.attempts import AttemptsSpent, complete
from bridge.turns.billing import RequestMeter
from bridge.turns.failure_lines import player_line
from bridge.turns.ports import ModelRoute, TurnContext, TurnOutput, TurnSnapshot
from bridge.turns.throttle import ActionBarStream
from bridge.turns.tool_status import THINKING
from bridge.turns.turn_progress import TurnDropped, TurnProgress


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRoutes:
    """The engine's parts a request uses, as they are when it is sent."""

    output: TurnOutput
    audit: AuditSink
    metrics: BridgeMetrics | None
    sleep: Callable[[float], Awaitable[None]]
    rng: random.Random | None
    monotonic: Callable[[], float]
    action_bar_interval_s: float

    async def answer(
        self,
        context: TurnContext,
        snapshot: TurnSnapshot,
        progress: TurnProgress,
        request: ProviderRequest,
        meter: RequestMeter,
    ) -> Completed:
        """The model's answer; raises `TurnDropped` when every route is spent."""
        bar = ActionBarStream(
            lambda text: self.output.action_bar(context.player, text),
            max_chars=snapshot.limits.action_bar_max_chars,
            interval_s=self.action_bar_interval_s,
            monotonic=self.monotonic,
            redact=snapshot.redactor.redact_text,
            redact_partial=snapshot.redactor.redact_partial,
            thinking=lambda: self.output.action_bar_line(context.player, THINKING, {}),
        )

        async def attempt_started(attempt: int) -> None:
            meter.attempt_started()
            bar.reset()

        async def streamed(delta: str) -> None:
            meter.text(delta)
            await bar.feed(delta)

        async def reasoned() -> None:
            meter.reasoning()
            await bar.reasoning()

        routes = snapshot.routes
        while True:
            route = routes[progress.route]

            def attempt_failed(attempt: int, failed: Failed, route: ModelRoute = route) -> None:
                meter.attempt_failed()
                if self.metrics is not None:
                    self.metrics.provider_failure(
                        failure_class=failed.failure_class, model=route.model_ref
                    )
                self.audit.record(
                    "provider.failure",
                    {
                        "turn_id": context.turn_id,
                        "model": route.model_ref,
                        "attempt": attempt,
                        "reason": failed.reason,
                        "retryable": failed.retryable,
                        "class": failed.failure_class,
                    },
                )

            sent = self.monotonic()
            result = await complete(
                route.stream,
                request,
                policy=route.policy,
                sleep=self.sleep,
                rng=self.rng,
                on_text=streamed,
                on_attempt_start=attempt_started,
                on_failure=attempt_failed,
                on_reasoning=reasoned,
            )
            if self.metrics is not None:
                self.metrics.model_request(
                    model=route.model_ref,
                    result="failed" if isinstance(result, AttemptsSpent) else "ok",
                    seconds=self.monotonic() - sent,
                )
            if not isinstance(result, AttemptsSpent):
                meter.attempt_answered(result)
                await bar.flush()  # the last delta the throttle held back
                return result
            last = result.failures[-1]
            if last.failure_class in FALLBACK_CLASSES and progress.route + 1 < len(routes):
                progress.route += 1
                self.audit.record(
                    "provider.fallback",
                    {
                        "turn_id": context.turn_id,
                        "from": route.model_ref,
                        "to": routes[progress.route].model_ref,
                        "class": last.failure_class,
                    },
                )
                continue
            line = player_line(last)
            raise TurnDropped(result.reason, key=line.key, shown=line.reason, failure=last)
