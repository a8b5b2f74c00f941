"""CPU cost of reading and assembling recorded provider streams: the bridge vs the openai SDK.

Both clients read the same recordings from the same local replay server, which runs in a
separate process so that only the client's own work is counted. For each recording the
benchmark takes the median process CPU time per stream over several rounds (after a warm-up)
and prints the ratio bridge / SDK. Goals: 0.2 or less on the long reasoning stream, 0.5 or
less on the short ones.

Then it times ``[DONE]`` to the turn's final event with the server holding the body open
(``bench.done_latency``; goal under 1 ms at p99).

Run: ``python -m bench.provider_bench [--rounds N] [--per-round K] [--done-turns T]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from openai import AsyncOpenAI
from pydantic import SecretStr

from bench import done_latency
from bridge.providers.client import ProviderClient
from bridge.providers.events import Completed
from bridge.providers.items import ApiType, PlayerMessage, ProviderRequest
from bridge.providers.settings import ModelSettings, ProviderSettings

REPO = Path(__file__).resolve().parents[1]
SERVER = REPO / "tests" / "providers" / "provider_replay_server.py"

# (recording, interaction index, protocol, goal for the ratio)
CASES: tuple[tuple[str, int, ApiType, float], ...] = (
    ("pydantic-ai/test_openai_responses_thinking_part_iter", 0, "openai_responses", 0.2),
    ("pydantic-ai/test_openai_responses_streaming_usage", 0, "openai_responses", 0.5),
    ("pydantic-ai/test_deepseek_responses_text_stream", 0, "openai_responses", 0.5),
    ("llm/test_responses_tool_use_streaming", 0, "openai_responses", 0.5),
    ("llm/test_responses_tool_use_streaming", 1, "openai_responses", 0.5),
    ("pydantic-ai/test_run_stream_sync_streams_real_model", 0, "openai_chat_completions", 0.5),
    ("pydantic-ai/test_run_stream_sync_streams_real_model", 1, "openai_chat_completions", 0.5),
    ("pydantic-ai/test_deepseek_model_thinking_stream", 0, "openai_chat_completions", 0.5),
    ("pydantic-ai/test_tool_use_failed_error_streaming", 2, "openai_chat_completions", 0.5),
)

Runner = Callable[[], Awaitable[None]]


def _bridge_runner(url: str, api_type: ApiType) -> tuple[Runner, Callable[[], Awaitable[None]]]:
    client = ProviderClient(
        ProviderSettings(
            provider_id="bench", api_type=api_type, base_url=url, api_key=SecretStr("x")
        )
    )
    model = ModelSettings(wire_model="bench-model")
    request = ProviderRequest(
        session_id="bench", items=(PlayerMessage(player="Steve", text="hello"),)
    )

    async def run() -> None:
        last = None
        async for event in client.stream(request, model):
            last = event
        if not isinstance(last, Completed):
            raise RuntimeError(f"bridge client did not complete: {last!r}")

    return run, client.aclose


def _sdk_runner(url: str, api_type: ApiType) -> tuple[Runner, Callable[[], Awaitable[None]]]:
    client = AsyncOpenAI(base_url=url, api_key="x", max_retries=0)

    async def run() -> None:
        if api_type == "openai_responses":
            stream = await client.responses.create(
                model="bench-model", input=[{"role": "user", "content": "hello"}], stream=True
            )
        else:
            stream = await client.chat.completions.create(  # type: ignore[assignment]
                model="bench-model",
                messages=[{"role": "user", "content": "hello"}],
                stream=True,
                stream_options={"include_usage": True},
            )
        async for _event in stream:
            pass

    return run, client.close


async def _cpu_per_stream(run: Runner, rounds: int, per_round: int) -> float:
    for _ in range(3):
        await run()
    samples: list[float] = []
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(per_round):
            await run()
        samples.append((time.process_time() - start) / per_round)
    return statistics.median(samples)


async def _bench(port: int, rounds: int, per_round: int) -> int:
    print(f"{'recording':62} {'bridge µs':>10} {'SDK µs':>10} {'ratio':>6} goal")
    missed = 0
    for name, index, api_type, goal in CASES:
        url = f"http://127.0.0.1:{port}/rec/{name}/{index}"
        costs: list[float] = []
        for make in (_bridge_runner, _sdk_runner):
            run, close = make(url, api_type)
            try:
                costs.append(await _cpu_per_stream(run, rounds, per_round))
            finally:
                await close()
        ratio = costs[0] / costs[1]
        missed += ratio > goal
        flag = "ok" if ratio <= goal else "MISSED"
        print(
            f"{name + '#' + str(index):62} {costs[0] * 1e6:10.0f} {costs[1] * 1e6:10.0f} "
            f"{ratio:6.3f} ≤{goal} {flag}"
        )
    return 1 if missed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--per-round", type=int, default=10)
    parser.add_argument("--done-turns", type=int, default=300)
    args = parser.parse_args(argv)
    server = subprocess.Popen(
        [sys.executable, str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        cpu = asyncio.run(_bench(port, args.rounds, args.per_round))
        return cpu | done_latency.report(args.done_turns)
    finally:
        with contextlib.suppress(Exception):
            assert server.stdin is not None
            server.stdin.close()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


if __name__ == "__main__":
    raise SystemExit(main())
