"""Bridge time per queued turn start: when a lane frees, how long the bridge takes to start the
next waiting turn.

A queued start is the wait line's `release` as the finished turn's after-turn listener calls
it: the oldest waiting wake whose lane is free takes the snapshot in force (configuration,
model, tools for its permission facts), starts its turn (the session's projection with a full
240-message history, the audit record, the task) and every player still waiting is sent their
new place. The baseline, measured in the same run on the same runtime, is the start of a turn
straight from a chat message on a free lane (the whole `on_chat`: wake, gates, snapshot,
start, verdict), the path every turn took before the wait line existed.

Two shapes are timed: four players waking the public lane at once (one starts, three wait in
its line), and four players asking privately (``/ai``) under a cap of one running turn (each
waits for the slot in their own lane). The provider is an in-memory stream and the link an
in-memory plugin, both answering at once (as in ``turn_bench``), so what is timed is the
bridge. Budget: p99 under 5 ms per queued start.

Run: ``python -m bench.queue_bench [--rounds 300]``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import sys
import tempfile
import time
from pathlib import Path

from bench.local_provider import BENCH_CONFIG, providers_yml
from bench.turn_bench import (
    HISTORY_MESSAGES,
    InstantLink,
    InstantProviderRuntime,
    _cpu_ticks,
    fill,
    percentiles,
)
from bridge.app.chat.handler import AppHandler
from bridge.app.wiring.heap import settle_startup_heap
from bridge.control import ControlPlaneStore, init_config_dir
from bridge.link.messages import (
    ChatRequest,
    CommandRequest,
    CommandSender,
    Hello,
    Permission,
    PlayerRef,
    ProtocolVersion,
)
from bridge.store.archive import DATA_DIR_NAME, TurnArchive, default_archive_path
from bridge.store.audit import AuditLog
from bridge.turns.ports import PlayerRef as LanePlayer

BUDGET_P99_MS = 5.0
WARMUP_ROUNDS = 10
PLAYERS = [
    PlayerRef(uuid=f"3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6{n}", name=f"Player{n}") for n in range(4)
]
GRANTED: list[Permission | str] = ["mineclaw.command.chat", "mineclaw.command.private"]


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    private: bool
    config: str


CASES = (
    Case("public lane, 3 waiting", False, "concurrency:\n  queue_length: 3\n"),
    Case(
        "private lanes, cap 1, 3 waiting",
        True,
        "concurrency:\n  queue_length: 3\n  max_concurrent_turns: 1\n",
    ),
)


@dataclasses.dataclass
class Timings:
    direct: list[float] = dataclasses.field(default_factory=list)
    """ms: a turn started straight from a chat message on a free lane (the baseline)."""
    queued: list[float] = dataclasses.field(default_factory=list)
    """ms: a waiting turn started by the wait line when a lane or slot freed."""
    steal_share: float = 0.0


async def measure(config: Path, case: Case, rounds: int) -> Timings:
    (config / "config.yml").write_text(BENCH_CONFIG + case.config)
    runtime = InstantProviderRuntime(
        store=ControlPlaneStore(config),
        archive=TurnArchive(default_archive_path(config)),
        audit=AuditLog.in_data_dir(config / DATA_DIR_NAME),
    )
    runtime.prepare()
    handler = AppHandler(runtime)
    hello = Hello(
        protocol=ProtocolVersion(major=1, minor=2), nonce="n" * 43, mac="0" * 64,
        instance_id="aaaaaaaa-8b7d-4c6a-9e2f-1a2b3c4d5e6f", plugin_version="bench",
        minecraft_version="bench", platform="testkit", features=[],
    )  # fmt: skip
    await handler.on_connected(InstantLink(), hello)
    settle_startup_heap()
    queue = runtime.lanes.queue
    timings = Timings()
    recording = False
    real_release = queue.release

    def timed_release() -> None:
        waiting = len(queue.waiting())
        started = time.perf_counter()
        real_release()
        elapsed = time.perf_counter() - started
        if recording and len(queue.waiting()) < waiting:  # it started a waiting turn
            timings.queued.append(elapsed * 1000)

    queue.release = timed_release  # type: ignore[method-assign]
    steal_before, total_before = _cpu_ticks()
    try:
        for number in range(rounds + WARMUP_ROUNDS):
            recording = number >= WARMUP_ROUNDS
            runtime.session.clear()
            fill(runtime, HISTORY_MESSAGES)
            for player in PLAYERS:
                lane = runtime.lanes.lanes.private(LanePlayer(player.uuid, player.name))
                lane.session.clear()
            gc.collect()
            for index, player in enumerate(PLAYERS):
                started = time.perf_counter()
                if case.private:
                    sender = CommandSender(kind="player", player=player, granted=GRANTED)
                    await handler.on_command(
                        CommandRequest(sender=sender, args=["ai", f"question {index}"])
                    )
                else:
                    request = ChatRequest(player=player, granted=GRANTED, text="@ai bed?")
                    verdict = await handler.on_chat(request)
                    assert verdict.decision == "accept", verdict
                elapsed = time.perf_counter() - started
                if index == 0 and recording:
                    timings.direct.append(elapsed * 1000)
            assert len(queue.waiting()) == 3, queue.waiting()
            # Every turn runs to its end; each end starts the next waiting one.
            while True:
                running = [lane.task for lane in runtime.lanes.lanes if lane.task is not None]
                pending = [task for task in running if not task.done()]
                if not pending and not queue.waiting():
                    break
                await asyncio.wait(pending or running, return_when=asyncio.FIRST_COMPLETED)
                await asyncio.sleep(0)
    finally:
        queue.release = real_release  # type: ignore[method-assign]
        await runtime.aclose()
    steal_after, total_after = _cpu_ticks()
    if total_after > total_before:
        timings.steal_share = (steal_after - steal_before) / (total_after - total_before)
    return timings


async def run(rounds: int) -> int:
    results: dict[Case, Timings] = {}
    with tempfile.TemporaryDirectory(prefix="queue-bench-") as tmp:
        config = Path(tmp) / "config"
        init_config_dir(config)
        (config / "providers.yml").write_text(providers_yml("http://127.0.0.1:9/v1"))
        for case in CASES:
            results[case] = await measure(config, case, rounds)
    print(f"bridge time to start a turn, in-memory provider and plugin, {rounds} rounds, ms")
    print(f"{'':<34}{'start':<10}{'n':>6}{'p50':>8}{'p99':>8}{'max':>8}{'steal':>8}")
    status = 0
    for case, timing in results.items():
        for label, values in (("direct", timing.direct), ("queued", timing.queued)):
            p50, p99, worst = percentiles(values)
            print(
                f"{case.name:<34}{label:<10}{len(values):>6}{p50:>8.2f}{p99:>8.2f}{worst:>8.2f}"
                f"{timing.steal_share:>8.1%}"
            )
    for case, timing in results.items():
        queued_p99 = percentiles(timing.queued)[1]
        direct_p99 = percentiles(timing.direct)[1]
        verdict = "within" if queued_p99 < BUDGET_P99_MS else "OVER"
        if queued_p99 >= BUDGET_P99_MS:
            status = 1
        print(
            f"{case.name}: queued start p99 {queued_p99:.2f} ms "
            f"({queued_p99 / direct_p99:.2f}x a start straight from chat); "
            f"{verdict} the budget of {BUDGET_P99_MS} ms"
        )
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=300, help="measured rounds per case")
    args = parser.parse_args(argv)
    return asyncio.run(run(max(10, min(args.rounds, 10_000))))


if __name__ == "__main__":
    sys.exit(main())
