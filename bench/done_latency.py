"""Time from ``[DONE]`` on the wire to the turn's last event, with the body held open.

A local server (in this process, so one clock times both ends) streams a short answer, writes
``data: [DONE]`` and then keeps the response body open, as some servers and proxies do. The real
provider client streams it into the real turn engine; the figure is the time from writing
``[DONE]`` to the engine receiving the stream's final event (``Completed``), and, for context,
to the turn's reply. A client that waited for the body to close would show the drain timeout
(1 s) here. Goal: under 1 ms at p99 for the final event.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections.abc import AsyncIterator, Sequence

from pydantic import SecretStr

from bench.local_provider import LocalProvider
from bridge.providers.client import ProviderClient
from bridge.providers.events import Completed, StreamEvent
from bridge.providers.items import ProviderRequest
from bridge.providers.settings import ModelSettings, ProviderSettings, RetryPolicy
from bridge.store.archive import ArchivedTurn
from bridge.store.audit_sink import MemoryAudit
from bridge.turns.activity import ServerActivity
from bridge.turns.engine import TurnEngine, TurnRequest
from bridge.turns.ports import PlayerRef, TurnLimits, TurnSnapshot
from bridge.turns.session import PublicSession

GOAL_P99_S = 0.001
PLAYER = PlayerRef(uuid="00000000-0000-0000-0000-000000000001", name="Steve")


class _Output:
    def __init__(self) -> None:
        self.replied_at: list[float] = []

    async def action_bar(self, player: PlayerRef, text: str) -> None:
        return None

    async def action_bar_line(
        self, player: PlayerRef, message_key: str, values: dict[str, str]
    ) -> None:
        return None

    async def reply(self, player: PlayerRef, lines: Sequence[str]) -> None:
        self.replied_at.append(time.perf_counter())

    async def reply_to_asker(self, player: PlayerRef, lines: Sequence[str]) -> None:
        self.replied_at.append(time.perf_counter())

    async def failure(self, player: PlayerRef, message_key: str, values: dict[str, str]) -> None:
        raise RuntimeError(f"bench turn failed: {values}")


class _Archive:
    def append(self, turn: ArchivedTurn) -> None:
        return None


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def measure(turns: int) -> tuple[list[float], list[float]]:
    """Per turn: seconds from [DONE] to the final event, and from [DONE] to the reply."""
    final_at: list[float] = []
    output = _Output()
    async with LocalProvider(chunks=3, text="noon ", hold_open=True) as server:
        settings = ProviderSettings(
            provider_id="bench",
            api_type="openai_chat_completions",
            base_url=f"http://127.0.0.1:{server.port}/v1",
            api_key=SecretStr("x"),
            retry=RetryPolicy(max_attempts=1),
        )
        async with ProviderClient(settings) as client:
            model = ModelSettings(wire_model="bench-model")

            async def timed(request: ProviderRequest) -> AsyncIterator[StreamEvent]:
                async with contextlib.aclosing(client.stream(request, model)) as events:
                    async for event in events:
                        if isinstance(event, Completed):
                            final_at.append(time.perf_counter())
                        yield event

            engine = TurnEngine(
                session=PublicSession(),
                archive=_Archive(),
                audit=MemoryAudit(),
                output=output,
                activity=ServerActivity(),
            )
            snapshot = TurnSnapshot(
                control_version="bench",
                model_ref="bench/model",
                stream=timed,
                limits=TurnLimits(model_attempts=1),
            )
            for _ in range(turns):
                outcome = await asyncio.wait_for(
                    engine.start(TurnRequest(PLAYER, "what time is it"), snapshot), 30
                )
                if outcome.status != "completed":
                    raise RuntimeError(f"bench turn did not complete: {outcome}")
    to_final = [f - d for f, d in zip(final_at, server.done_at, strict=True)]
    to_reply = [r - d for r, d in zip(output.replied_at, server.done_at, strict=True)]
    return to_final, to_reply


def report(turns: int) -> int:
    """Print the figure; 1 when the p99 misses the goal."""
    to_final, to_reply = asyncio.run(measure(turns))
    p99 = _percentile(to_final, 0.99)
    print(
        f"\n[DONE] to the turn's final event, body held open ({turns} turns): "
        f"p50 {statistics.median(to_final) * 1e3:.3f} ms, p99 {p99 * 1e3:.3f} ms, "
        f"max {max(to_final) * 1e3:.3f} ms; goal p99 < {GOAL_P99_S * 1e3:.0f} ms "
        f"{'ok' if p99 < GOAL_P99_S else 'MISSED'}"
    )
    print(
        f"[DONE] to the turn's reply (archive and session included): "
        f"p50 {statistics.median(to_reply) * 1e3:.3f} ms, "
        f"p99 {_percentile(to_reply, 0.99) * 1e3:.3f} ms"
    )
    return 0 if p99 < GOAL_P99_S else 1
