"""Round-trip time of a ``chat`` request through the bridge, against a bare echo floor.

The testkit JVM (the real plugin core) sends ``chat`` requests at a fixed rate, straight over
the link whatever ``link.state`` says, and measures each request's time to its verdict. It does
so against a bare websockets server that skips all checks and answers every ``chat`` at once
with a fixed ``pass`` verdict (the floor of this path: the same client, the same loopback, the
same websockets library), and against the real ``LinkServer`` with the placeholder handler of
the link tests (``tests/link/placeholder.py``). It
prints p50/p99 of both, the server's CPU time per request, and the p99 ratio. Budget: the
bridge adds at most 50% to the floor's p99 (ratio 1.5 or less).

Run: ``python -m bench.link_bench [--rate 200] [--seconds 10] [--rounds 3]`` after ``make java``.
The pairs alternate and the verdict uses the median ratio, as the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from bridge.link.auth import ensure_token_file, new_nonce, read_token
from bridge.link.server import LinkServer, LinkSettings
from tests.link.placeholder import PlaceholderHandler

REPO = Path(__file__).resolve().parents[1]
JAR = REPO / "plugin-java" / "testkit" / "target" / "mineclaw-testkit.jar"
BUDGET = 1.5
WARMUP_SECONDS = 3
EVENT_TIMEOUT = 60.0

PASS_VERDICT = '{"decision":"pass","ai_prefix":false,"notice":null}'


async def _echo(ws: ServerConnection) -> None:
    """The floor: a handshake that accepts any MAC, then a fixed verdict for every chat."""
    count = 0

    async def send(kind: str, data: str, re: str | None = None) -> None:
        nonlocal count
        count += 1
        answer = f',"re":"{re}"' if re else ""
        await ws.send(f'{{"v":1,"id":"e-{count}","type":"{kind}"{answer},"data":{data}}}')

    await send(
        "hello.challenge",
        json.dumps({"nonce": new_nonce(), "protocol": 1, "bridge_version": "echo"}),
    )
    with contextlib.suppress(ConnectionClosed):  # the testkit may exit without a close frame
        async for raw in ws:
            frame = json.loads(raw)
            if frame["type"] == "hello":
                session = '{"bridge_version":"echo","session_id":"echo"}'
                await send("hello.result", session, frame["id"])
                await send("link.state", '{"forward":"prefixed","public_prefix":"@ai"}')
            elif frame["type"] == "chat":
                await send("chat.result", PASS_VERDICT, frame["id"])


class Testkit:
    """The testkit JVM on JSON lines; only what the benchmark needs."""

    def __init__(self, process: asyncio.subprocess.Process, log: Path) -> None:
        self.process = process
        self.log = log

    @classmethod
    async def start(cls, url: str, token_file: Path) -> Testkit:
        log = token_file.with_name(f"testkit-{os.urandom(4).hex()}.log")
        java = (
            Path(os.environ.get("JAVA25_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"))
            / "bin"
            / "java"
        )
        process = await asyncio.create_subprocess_exec(
            str(java), "-jar", str(JAR), "--url", url, "--token-file", str(token_file),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=log.open("wb"),
        )  # fmt: skip
        testkit = cls(process, log)
        await testkit.until(lambda e: e.get("event") == "link.up")
        return testkit

    async def until(
        self, matches: Callable[[dict[str, Any]], bool], timeout: float = EVENT_TIMEOUT
    ) -> dict[str, Any]:
        assert self.process.stdout is not None
        try:
            async with asyncio.timeout(timeout):
                while line := await self.process.stdout.readline():
                    try:
                        event = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(event, dict) and matches(event):
                        return event
        except TimeoutError:
            raise RuntimeError(
                f"no answer from the testkit in {timeout} s{self._log_tail()}"
            ) from None
        raise RuntimeError(f"the testkit exited{self._log_tail()}")

    def _log_tail(self) -> str:
        lines = self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
        return ":\n" + "\n".join(lines) if lines else ""

    async def send(self, op: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(op) + "\n").encode())
        await self.process.stdin.drain()

    async def bench_chat(self, rate: int, seconds: int, ref: str) -> dict[str, Any]:
        op = {
            "op": "bench.chat",
            "rate": rate,
            "seconds": seconds,
            "player": "Steve",
            "text": "hello",
            "ref": ref,
        }
        await self.send(op)
        return await self.until(
            lambda e: e.get("event") == "bench.result" and e.get("ref") == ref,
            timeout=seconds * 3 + EVENT_TIMEOUT,
        )

    async def stop(self) -> None:
        if self.process.returncode is None:
            try:
                await self.send({"op": "shutdown"})
                await asyncio.wait_for(self.process.wait(), EVENT_TIMEOUT)
            except (TimeoutError, ConnectionError):
                self.process.kill()
                await self.process.wait()


async def _measure(url: str, token_file: Path, rate: int, seconds: int) -> dict[str, Any]:
    testkit = await Testkit.start(url, token_file)
    try:
        await testkit.bench_chat(rate, WARMUP_SECONDS, "warmup")  # JIT and connection warm-up
        # The server runs in this process, which otherwise only waits for the result line, so
        # this process's CPU time is the server's: a figure the neighbours' load hardly moves.
        cpu_before = time.process_time()
        result = await testkit.bench_chat(rate, seconds, "measured")
        result["cpu_us"] = (time.process_time() - cpu_before) * 1e6 / max(result["count"], 1)
        return result
    finally:
        await testkit.stop()


async def _with_echo(
    run: Callable[[str], Awaitable[dict[str, Any]]],
) -> dict[str, Any]:
    async with serve(_echo, "127.0.0.1", 0, compression=None, max_size=65536) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        return await run(f"ws://127.0.0.1:{port}/link")


async def _with_bridge(
    token_file: Path, run: Callable[[str], Awaitable[dict[str, Any]]]
) -> dict[str, Any]:
    token = read_token(token_file)
    settings = LinkSettings(port=0)
    async with LinkServer(token=token, handler=PlaceholderHandler(), settings=settings) as server:
        return await run(server.url)


def _row(name: str, result: dict[str, Any]) -> str:
    ms = {key: result[key] / 1000 for key in ("p50_us", "p99_us", "max_us")}
    return (
        f"{name:<26}{result['count']:>7}{result['errors']:>8}"
        f"{ms['p50_us']:>9.2f}{ms['p99_us']:>9.2f}{ms['max_us']:>9.2f}{result['cpu_us']:>11.0f}"
    )


async def run(rate: int, seconds: int, rounds: int) -> int:
    if not JAR.is_file():
        print(f"the testkit jar {JAR} is missing: run `make java` first", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="link-bench-") as tmp:
        token_file = ensure_token_file(Path(tmp))

        async def measure(url: str) -> dict[str, Any]:
            return await _measure(url, token_file, rate, seconds)

        print(f"link round trip, chat -> verdict, {rate}/s for {seconds} s, testkit JVM client")
        header = (
            f"{'count':>7}{'errors':>8}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'cpu us/req':>11}"
        )
        print(f"{'':<26}{header}")
        floors: list[dict[str, Any]] = []
        bridges: list[dict[str, Any]] = []
        # Alternating pairs: a noisy stretch of a shared machine then hurts both sides alike.
        for _ in range(rounds):
            floors.append(await _with_echo(measure))
            bridges.append(await _with_bridge(token_file, measure))
            print(_row("bare websockets echo", floors[-1]), flush=True)
            print(_row("bridge (placeholder)", bridges[-1]), flush=True)
    errors = sum(r["errors"] for r in floors + bridges)
    ratios = [b["p99_us"] / max(f["p99_us"], 1) for f, b in zip(floors, bridges, strict=True)]
    ratio = statistics.median(ratios)
    if rounds > 1:
        for name, results in (("echo", floors), ("bridge", bridges)):
            p50 = statistics.median(r["p50_us"] for r in results) / 1000
            p99 = statistics.median(r["p99_us"] for r in results) / 1000
            cpu = statistics.median(r["cpu_us"] for r in results)
            print(
                f"median of {rounds} rounds, {name}: p50 {p50:.2f} ms, p99 {p99:.2f} ms, "
                f"server CPU {cpu:.0f} us per request"
            )
    verdict = "within" if ratio <= BUDGET else "OVER"
    shown = ", ".join(f"{r:.2f}" for r in ratios)
    print(f"p99 ratio bridge/echo: {ratio:.2f} (rounds: {shown}); {verdict} the budget of {BUDGET}")
    if errors:
        print(f"{errors} requests failed", file=sys.stderr)
    return 1 if errors else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rate", type=int, default=200, help="chat requests per second")
    parser.add_argument("--seconds", type=int, default=10, help="measured seconds per server")
    parser.add_argument(
        "--rounds", type=int, default=3, help="floor/bridge pairs, alternating; the median counts"
    )
    args = parser.parse_args(argv)
    try:
        return asyncio.run(run(args.rate, args.seconds, max(1, args.rounds)))
    except RuntimeError as exc:
        print(f"link bench failed: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
