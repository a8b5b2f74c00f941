"""Listen-mode chat verdicts at 200 messages/s while a turn streams, against the echo floor.

The testkit JVM (the real plugin core) sends ``chat`` requests at a fixed rate and times each
one to its verdict, first against the bare websockets echo of ``bench.link_bench`` (the floor:
same client, same loopback, same library, a fixed verdict), then against the real application:
``LinkServer`` with ``AppHandler``, listen mode on, and one turn streaming from a local SSE
provider the whole time (action-bar frames flowing to the plugin). Every message is then an
implicit wake that goes through wake classification and the gates; the sender has no
permission, so each gets a refusal with its notice, the costliest verdict. The provider runs in
its own process, as a real one would. Budget: p99 at most
1.5x the floor's p99, measured in the same run. The pairs alternate and the median ratio counts.

``--private N`` starts N private conversations (``/ai``, each in its own lane) streaming beside
the public turn for the whole measurement: ``--rate 100 --private 4`` is a server whose
players chat at 100 lines a second while a public turn and four private turns run.

Run: ``python -m bench.verdict_load_bench [--rate 200] [--seconds 10] [--rounds 3]
[--private 0]`` after ``make java``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.link_bench import JAR, WARMUP_SECONDS, Testkit, _row, _with_echo
from bench.local_provider import BENCH_CONFIG, provider_process, providers_yml
from bridge.app.chat.handler import AppHandler
from bridge.app.wiring.runtime import Runtime
from bridge.control import init_config_dir
from bridge.link.auth import ensure_token_file, read_token
from bridge.link.messages import ChatRequest, CommandRequest, CommandSender, PlayerRef
from bridge.link.server import LinkServer, LinkSettings

BUDGET = 1.5
STREAM_DELAY_S = 0.02
ASKER = PlayerRef(uuid="0b6a1c9e-2222-4c6a-9e2f-1a2b3c4d5e6f", name="Asker")


async def measure(url: str, token_file: Path, rate: int, seconds: int) -> dict[str, Any]:
    testkit = await Testkit.start(url, token_file)
    try:
        await testkit.bench_chat(rate, WARMUP_SECONDS, "warmup")
        cpu_before = time.process_time()
        result = await testkit.bench_chat(rate, seconds, "measured")
        result["cpu_us"] = (time.process_time() - cpu_before) * 1e6 / max(result["count"], 1)
        return result
    finally:
        await testkit.stop()


def private_asker(number: int) -> PlayerRef:
    return PlayerRef(
        uuid=f"0b6a1c9e-3333-4c6a-9e2f-1a2b3c4d5e{number:02d}", name=f"Private{number}"
    )


async def with_application(
    config: Path,
    token_file: Path,
    rate: int,
    seconds: int,
    *,
    streaming: bool = True,
    private: int = 0,
) -> dict[str, Any]:
    runtime = Runtime.open(config)
    handler = AppHandler(runtime)
    server = LinkServer(
        token=read_token(token_file), handler=handler, settings=LinkSettings(port=0)
    )
    await server.start()
    try:
        testkit = await Testkit.start(server.url, token_file)
        try:
            runtime.listen.set(True)
            await handler.send_link_state()
            wake = ChatRequest(
                player=ASKER,
                granted=["mineclaw.command.chat", "mineclaw.bypass.ratelimit"],
                text="@ai tell me a long story",
            )
            verdict = await handler.on_chat(wake) if streaming else None
            if verdict is not None and verdict.decision != "accept":
                raise RuntimeError(f"the streaming turn did not start: {verdict}")
            for number in range(private):
                sender = CommandSender(
                    kind="player",
                    player=private_asker(number),
                    granted=["mineclaw.command.private", "mineclaw.bypass.ratelimit"],
                )
                await handler.on_command(
                    CommandRequest(sender=sender, args=["ai", "tell me a long private story"])
                )
            if runtime.lanes.cap.running != int(streaming) + private:
                raise RuntimeError(
                    f"{runtime.lanes.cap.running} turns run, not all that were asked"
                )
            await testkit.bench_chat(rate, WARMUP_SECONDS, "warmup")
            cpu_before = time.process_time()
            result = await testkit.bench_chat(rate, seconds, "measured")
            result["cpu_us"] = (time.process_time() - cpu_before) * 1e6 / max(result["count"], 1)
            if streaming and runtime.activity.current != "turn":
                raise RuntimeError("the turn ended before the measurement did")
            if runtime.lanes.cap.running != int(streaming) + private:
                raise RuntimeError("a private turn ended before the measurement did")
            return result
        finally:
            for lane in runtime.lanes.lanes:
                lane.engine.stop()
            await testkit.stop()
    finally:
        await server.close()
        await runtime.aclose()


async def run(rate: int, seconds: int, rounds: int, streaming: bool, private: int = 0) -> int:
    if not JAR.is_file():
        print(f"the testkit jar {JAR} is missing: run `make java` first", file=sys.stderr)
        return 1
    chunks = int((WARMUP_SECONDS + seconds + 30) / STREAM_DELAY_S)
    async with provider_process(chunks=chunks, delay_s=STREAM_DELAY_S) as provider_url:
        with tempfile.TemporaryDirectory(prefix="verdict-bench-") as tmp:
            config = Path(tmp) / "config"
            init_config_dir(config)
            (config / "config.yml").write_text(BENCH_CONFIG)
            (config / "providers.yml").write_text(providers_yml(provider_url))
            token_file = ensure_token_file(config)

            async def floor(url: str) -> dict[str, Any]:
                return await measure(url, token_file, rate, seconds)

            print(
                f"listen-mode verdicts, {rate}/s for {seconds} s, a turn streaming "
                f"(one delta every 20 ms) and {private} private turns, testkit JVM client"
            )
            header = (
                f"{'count':>7}{'errors':>8}{'p50 ms':>9}{'p99 ms':>9}"
                f"{'max ms':>9}{'cpu us/req':>11}"
            )
            print(f"{'':<26}{header}")
            floors: list[dict[str, Any]] = []
            apps: list[dict[str, Any]] = []
            for _ in range(rounds):
                floors.append(await _with_echo(floor))
                apps.append(
                    await with_application(
                        config, token_file, rate, seconds, streaming=streaming, private=private
                    )
                )
                print(_row("bare websockets echo", floors[-1]), flush=True)
                print(
                    _row("application" + (", streaming" if streaming else ", idle"), apps[-1]),
                    flush=True,
                )
    errors = sum(r["errors"] for r in floors + apps)
    ratios = [a["p99_us"] / max(f["p99_us"], 1) for f, a in zip(floors, apps, strict=True)]
    ratio = statistics.median(ratios)
    verdict = "within" if ratio <= BUDGET else "OVER"
    shown = ", ".join(f"{r:.2f}" for r in ratios)
    print(f"p99 ratio application/echo: {ratio:.2f} (rounds: {shown}); {verdict} budget {BUDGET}")
    if errors:
        print(f"{errors} requests failed", file=sys.stderr)
    return 1 if errors else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rate", type=int, default=200, help="chat requests per second")
    parser.add_argument("--seconds", type=int, default=10, help="measured seconds per server")
    parser.add_argument("--rounds", type=int, default=3, help="floor/application pairs")
    parser.add_argument(
        "--idle", action="store_true", help="no streaming turn (to see what the turn costs)"
    )
    parser.add_argument(
        "--private", type=int, default=0, help="private turns streaming beside the public one"
    )
    args = parser.parse_args(argv)
    rounds = max(1, min(args.rounds, 10))
    private = max(0, min(args.private, 16))
    try:
        return asyncio.run(
            run(args.rate, min(args.seconds, 120), rounds, not args.idle, private=private)
        )
    except RuntimeError as exc:
        print(f"verdict bench failed: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
