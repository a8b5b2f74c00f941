"""The first text frame on the asker's action bar, against the chat-verdict round trip.

The testkit JVM (the real plugin core) has a player ask ``@ai ...`` in public chat, through the
real ``LinkServer`` and ``AppHandler``; the model is a local Chat Completions server in its own
process whose first delta ("word ") is written at once and the rest 20 ms apart, and which says
when it wrote each stream's first delta (``time.perf_counter``: the machine's monotonic clock,
the same in every process). Before each question the same player says a plain line, and its
verdict round trip (the control line written to the testkit to its ``chat.outcome`` read back)
is the baseline of the same run. The first frame is the time from the provider writing the
first delta to the testkit reporting the first action-bar frame with the answer's text: the
provider's HTTP response read and its SSE parsed, the engine, the frame's redaction and layout,
the link send, the plugin. The verdict crosses the testkit's pipes and the link both ways; the
first frame the provider's connection, the link to the plugin and the testkit's output. The
figures are of the questions after 100 warm-up ones (the plugin's action-bar path runs
interpreted in a cold JVM: after 30 the plugin's part was about twice what it is after 150).
Goal: first frame p50 at most 1.5x the verdict round trip's p50.

The provider writes its response headers, then its first delta 5 ms later (``--head-start-ms``),
as a model server does (headers when it takes the request, the first token once the prompt is
read): written back to back, the client's handling of the response's headers (httpx's response,
the status and content-type checks, about 0.2 ms) fell inside the first frame's time, which no
asker waits for behind a real model. ``--head-start-ms 0`` measures it the old way.

The baseline line is said after the same pause (the head start) as the first delta follows: on
this machine a process that has slept a few milliseconds takes about 0.2 ms longer to wake
(a loopback write between two idle Python processes arrives 0.27 ms later), and a line said
back to back with the previous one finds every process awake. Measured back to back, the verdict
was 0.25-0.37 ms against 0.59-0.69 ms after the pause, while the first frame always pays two
such wakes (the bridge woken by the provider, the plugin by the bridge). The back-to-back figure
is printed too, for reference.

``--steps`` also stamps, in the bridge, when the provider client yields the first text delta
and when the action-bar frame has been handed to the link, and prints the median of each step.

Run: ``python -m bench.first_frame_bench [--questions 60] [--steps]`` after ``make java``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from bench.link_bench import JAR, Testkit
from bench.local_provider import BENCH_CONFIG, providers_yml, stop_provider
from bridge.app.chat.handler import AppHandler
from bridge.app.lanes.output import LinkTurnOutput
from bridge.app.wiring.runtime import Runtime
from bridge.control import init_config_dir
from bridge.link.auth import ensure_token_file, read_token
from bridge.link.server import LinkServer, LinkSettings
from bridge.providers.client import ProviderClient
from bridge.providers.events import TextDelta

GOAL = 1.5
CHUNKS = 6
DELAY_S = 0.02
HEAD_START_S = 0.005
WARMUP = 100
PLAYER = "Steve"


class _Stamps:
    """Bridge-side stamps for ``--steps``: the first text delta yielded by the provider client
    and the first action-bar frame handed to the link, per question."""

    def __init__(self) -> None:
        self.delta: list[float] = []
        self.sent_start: list[float] = []
        self.sent: list[float] = []
        self._undo: list[Callable[[], None]] = []

    def install(self) -> None:
        stream = ProviderClient.stream
        action_bar = LinkTurnOutput.action_bar
        stamps = self

        async def stamped_stream(self: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            first = True
            async for event in stream(self, *args, **kwargs):
                if first and isinstance(event, TextDelta):
                    first = False
                    stamps.delta.append(time.perf_counter())
                yield event

        async def stamped_bar(self: Any, player: Any, text: str) -> None:
            started = time.perf_counter()
            await action_bar(self, player, text)
            if len(stamps.sent) < len(stamps.delta):
                stamps.sent_start.append(started)
                stamps.sent.append(time.perf_counter())

        ProviderClient.stream = stamped_stream  # type: ignore[method-assign,assignment]
        LinkTurnOutput.action_bar = stamped_bar  # type: ignore[method-assign]
        self._undo = [
            lambda: setattr(ProviderClient, "stream", stream),
            lambda: setattr(LinkTurnOutput, "action_bar", action_bar),
        ]

    def uninstall(self) -> None:
        for undo in self._undo:
            undo()


@contextlib.asynccontextmanager
async def _provider(first_deltas: asyncio.Queue[float], head_start_s: float) -> AsyncIterator[str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.local_provider", str(CHUNKS), str(DELAY_S), "word ",
        "stamps", str(head_start_s), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    stdout = process.stdout

    async def read_stamps() -> None:
        while line := await stdout.readline():
            first_deltas.put_nowait(float(line.split()[1]))

    reader: asyncio.Task[None] | None = None
    try:
        port = int(await asyncio.wait_for(stdout.readline(), 60))
        reader = asyncio.create_task(read_stamps())
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await stop_provider(process)
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader


async def _timed(
    testkit: Testkit, op: dict[str, Any], matches: Callable[[dict[str, Any]], bool]
) -> tuple[float, dict[str, Any]]:
    """Writes ``op`` and waits for the first event ``matches`` accepts: (the time, the event)."""
    started = time.perf_counter()
    await testkit.send(op)
    event = await testkit.until(matches)
    return started, event | {"at": time.perf_counter()}


async def _verdict(testkit: Testkit, ref: str) -> float:
    """The round trip of one plain line: the control line written to its ``chat.outcome``."""
    plain = {"op": "chat", "player": PLAYER, "text": f"nice day {ref}", "ref": ref}
    started, outcome = await _timed(
        testkit, plain, lambda e: e.get("event") == "chat.outcome" and e.get("ref") == ref
    )
    return float(outcome["at"]) - started


async def _ask(
    testkit: Testkit,
    runtime: Runtime,
    number: int,
    first_deltas: asyncio.Queue[float],
    idle_s: float,
) -> tuple[float, float, float, float, float] | None:
    """Two plain lines and one question: (verdict round trip after ``idle_s``, first frame,
    question to frame, when the provider wrote the first delta, verdict back to back); None for
    a question that got no reply."""
    # The first frame always follows an idle pause (the provider's head start), so its baseline
    # does too; the back-to-back line is printed for reference only.
    await asyncio.sleep(idle_s)
    verdict = await _verdict(testkit, f"p{number}")
    back_to_back = await _verdict(testkit, f"b{number}")
    question = {"op": "chat", "player": PLAYER, "text": f"@ai question {number}", "ref": "q"}
    asked, frame = await _timed(
        testkit,
        question,
        lambda e: e.get("event") == "actionbar" and "word" in e.get("text", ""),
    )
    delta_at = await asyncio.wait_for(first_deltas.get(), 10)
    # The reply (or the line saying why there is none) ends the turn; the next question must
    # not find it still running.
    ended = await testkit.until(
        lambda e: e.get("event") == "message" and e.get("to") in ("*", PLAYER)
    )
    while runtime.lanes.cap.running:
        await asyncio.sleep(0.001)
    while not first_deltas.empty():  # a stream the turn tried again: its stamp is not the next's
        first_deltas.get_nowait()
    if "word" not in ended.get("text", ""):
        print(f"question {number} had no reply: {ended.get('text')!r}", file=sys.stderr)
        return None
    return verdict, frame["at"] - delta_at, frame["at"] - asked, delta_at, back_to_back


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"p50 {statistics.median(values) * 1000:7.2f} ms   p90 {p90 * 1000:7.2f} ms"


async def run(questions: int, steps: bool, head_start_s: float = HEAD_START_S) -> int:
    if not JAR.is_file():
        print(f"the testkit jar {JAR} is missing: run `make java` first", file=sys.stderr)
        return 1
    stamps = _Stamps()
    if steps:
        stamps.install()
    first_deltas: asyncio.Queue[float] = asyncio.Queue()
    try:
        async with _provider(first_deltas, head_start_s) as provider_url:
            with tempfile.TemporaryDirectory(prefix="first-frame-bench-") as tmp:
                config = Path(tmp) / "config"
                init_config_dir(config)
                (config / "config.yml").write_text(BENCH_CONFIG)
                (config / "providers.yml").write_text(providers_yml(provider_url))
                token_file = ensure_token_file(config)
                results = await _measure(
                    config, token_file, questions, first_deltas, stamps, head_start_s
                )
    finally:
        stamps.uninstall()
    columns = (list(column) for column in zip(*results, strict=True))
    verdicts, frames, whole, written, back_to_back = columns
    print(f"first action-bar frame against the chat verdict, {len(results)} questions answered")
    print(f"  verdict round trip (plain line)      {_ms(verdicts)}")
    print(f"  (the same, back to back: reference)  {_ms(back_to_back)}")
    print(f"  first frame (provider's first delta) {_ms(frames)}")
    print(f"  question to first frame              {_ms(whole)}")
    if steps and len(stamps.delta) == len(stamps.sent) == WARMUP + len(results):
        deltas = stamps.delta[WARMUP:]
        provider = [d - w for d, w in zip(deltas, written, strict=False)]
        print(f"    provider write -> client's delta   {_ms(provider)}")
        engine = [s - d for s, d in zip(stamps.sent_start[WARMUP:], deltas, strict=False)]
        send = [
            e - s for s, e in zip(stamps.sent_start[WARMUP:], stamps.sent[WARMUP:], strict=False)
        ]
        print(f"    client's delta -> frame to send    {_ms(engine)}")
        print(f"    frame handed to the link           {_ms(send)}")
    ratio = statistics.median(frames) / statistics.median(verdicts)
    verdict = "within" if ratio <= GOAL else "OVER"
    print(f"first frame p50 / verdict p50: {ratio:.2f}; {verdict} the goal {GOAL}")
    return 0


async def _measure(
    config: Path,
    token_file: Path,
    questions: int,
    first_deltas: asyncio.Queue[float],
    stamps: _Stamps,
    idle_s: float,
) -> list[tuple[float, float, float, float, float]]:
    runtime = Runtime.open(config)
    handler = AppHandler(runtime)
    server = LinkServer(
        token=read_token(token_file), handler=handler, settings=LinkSettings(port=0)
    )
    await server.start()
    try:
        testkit = await Testkit.start(server.url, token_file)
        try:
            granted = ["mineclaw.command.chat", "mineclaw.bypass.ratelimit"]
            await testkit.send({"op": "player.add", "name": PLAYER, "permissions": granted})
            results = []
            for number in range(WARMUP + questions):
                measured = await _ask(testkit, runtime, number, first_deltas, idle_s)
                if number >= WARMUP and measured is not None:
                    results.append(measured)
            return results
        finally:
            await testkit.stop()
    finally:
        await server.close()
        await runtime.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--questions", type=int, default=60, help="measured questions")
    parser.add_argument("--steps", action="store_true", help="time the bridge's steps too")
    parser.add_argument(
        "--head-start-ms",
        type=float,
        default=HEAD_START_S * 1000,
        help="pause between the provider's headers and its first delta (0: none)",
    )
    args = parser.parse_args(argv)
    head_start_s = max(0.0, min(args.head_start_ms, 1000.0)) / 1000
    return asyncio.run(run(max(1, min(args.questions, 1000)), args.steps, head_start_s))


if __name__ == "__main__":
    raise SystemExit(main())
