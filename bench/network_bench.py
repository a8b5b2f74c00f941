"""A network on one bridge: 20 linked servers at 10 chat lines/s each, verdict p99 against the
bare echo of the same run.

Twenty testkit JVMs would need some 3 GB and most of two shared cores before a single line is
sent, so the servers here are lightweight link clients in this process (Python websockets): each
does the real handshake with its own ``server_id`` and token (the MAC over the nonce), then
sends ``chat`` requests on a fixed schedule (open loop: a slow answer does not slow the
sender) and times each one to its verdict. The floor is the bare websockets echo of
``bench.link_bench`` (a fixed verdict, any MAC accepted), in its own process; the measured side
is ``python -m bridge serve`` with a ``servers.yml`` of 20 servers, in its own process, each
line an ordinary chat line (no wake) that goes through the server's own wake rules. The pairs
alternate; the median of the rounds' p99 ratios counts. Budget: 1.5x.

Run: ``python -m bench.network_bench [--servers 20] [--rate 10] [--seconds 10] [--rounds 3]``.
``--failover`` gives the failover rows instead (``bench.failover_bench``: a dead, a hung holder,
a stalled backend, a stalled standby; seconds from the fault to an answered question).
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
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import serve

from bench.link_bench import _echo
from bridge.link.auth import compute_mac

BUDGET = 1.5
WARMUP_SECONDS = 2
START_TIMEOUT = 60.0
INSTANCE = "3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f"


def _player(server_id: str) -> dict[str, str]:
    """The player chatting on ``server_id``: one per server, as on a real network, where a
    player is on one backend at a time. (One UUID on every server would make each line a move
    between servers, which closes prompts and writes a ``player.moved`` record: a different,
    rarer path than the chat this bench measures.)"""
    number = int(server_id.rsplit("-", 1)[1])
    return {"uuid": f"0b9e4d1a-2c3f-4e5d-8a7b-{number:012x}", "name": f"Steve{number}"}


REPO = Path(__file__).resolve().parents[1]


def _server_ids(count: int) -> list[str]:
    return [f"server-{n:02d}" for n in range(count)]


def _token(server_id: str) -> str:
    return (server_id.replace("-", "x") * 8)[:43]


class Client:
    """One linked server: the handshake, then timed chat requests."""

    def __init__(self, ws: ClientConnection, server_id: str) -> None:
        self.ws = ws
        self.server_id = server_id
        self.sent: dict[str, float] = {}
        self.latencies_us: list[float] = []
        self.errors = 0
        self._reader: asyncio.Task[None] | None = None

    @classmethod
    async def link(cls, url: str, server_id: str) -> Client:
        ws = await connect(url, compression=None, max_size=65536)
        client = cls(ws, server_id)
        challenge = json.loads(await ws.recv())
        nonce = challenge["data"]["nonce"]
        hello = {
            "protocol": {"major": 1, "minor": 1},
            "nonce": nonce,
            "mac": compute_mac(_token(server_id), nonce, INSTANCE, server_id),
            "instance_id": INSTANCE,
            "plugin_version": "bench",
            "minecraft_version": "1.21.8",
            "platform": "testkit",
            "features": ["chat"],
            "server_id": server_id,
        }
        await ws.send(json.dumps({"v": 1, "id": "h", "type": "hello", "data": hello}))
        result = json.loads(await ws.recv())
        if result["type"] != "hello.result":
            raise RuntimeError(f"{server_id}: handshake refused: {result}")
        client._reader = asyncio.create_task(client._read())
        return client

    async def _read(self) -> None:
        with contextlib.suppress(Exception):
            async for raw in self.ws:
                now = time.perf_counter()
                frame = json.loads(raw)
                sent = self.sent.pop(frame.get("re") or "", None)
                if sent is None:
                    continue
                if frame["type"] == "chat.result":
                    self.latencies_us.append((now - sent) * 1e6)
                else:
                    self.errors += 1

    async def chat(self, rate: int, seconds: float, tag: str, offset: float = 0.0) -> None:
        """``offset``: this server's phase, so the servers' lines interleave as real chat does
        instead of arriving in bursts of one line per server."""
        interval = 1 / rate
        start = time.perf_counter() + offset * interval
        for n in range(int(rate * seconds)):
            delay = start + n * interval - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            frame_id = f"{tag}-{n}"
            data = {
                "player": _player(self.server_id),
                "granted": ["mineclaw.command.chat"],
                "text": f"hi {n}",
            }
            self.sent[frame_id] = time.perf_counter()
            await self.ws.send(json.dumps({"v": 1, "id": frame_id, "type": "chat", "data": data}))

    async def close(self) -> None:
        await self.ws.close()
        if self._reader is not None:
            self._reader.cancel()


async def measure(url: str, servers: int, rate: int, seconds: int) -> dict[str, Any]:
    clients = [await Client.link(url, server_id) for server_id in _server_ids(servers)]
    try:
        phases = [n / len(clients) for n in range(len(clients))]
        await asyncio.gather(
            *(c.chat(rate, WARMUP_SECONDS, "w", p) for c, p in zip(clients, phases, strict=True))
        )
        for client in clients:
            client.latencies_us.clear()
        await asyncio.gather(
            *(c.chat(rate, seconds, "m", p) for c, p in zip(clients, phases, strict=True))
        )
        # Every answer in flight arrives (or counts as lost) before the numbers are taken.
        deadline = time.perf_counter() + 10
        while any(c.sent for c in clients) and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
        latencies = sorted(x for c in clients for x in c.latencies_us)
        lost = sum(len(c.sent) for c in clients)
        errors = sum(c.errors for c in clients)
        quantiles = statistics.quantiles(latencies, n=100)
        return {
            "count": len(latencies),
            "errors": errors + lost,
            "p50_us": statistics.median(latencies),
            "p99_us": quantiles[98],
            "max_us": latencies[-1],
        }
    finally:
        for client in clients:
            await client.close()


async def _start(args: list[str], pattern: str) -> tuple[asyncio.subprocess.Process, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        cwd=REPO,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdout is not None
    async with asyncio.timeout(START_TIMEOUT):
        while line := (await process.stdout.readline()).decode():
            if line.startswith(pattern):
                return process, line.split()[-1]
    raise RuntimeError(f"{args} did not start")


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.terminate()
        await process.wait()


def _write_config(config: Path, servers: int) -> None:
    config.mkdir()
    lines = ["schema: 1", "servers:"]
    env = []
    for server_id in _server_ids(servers):
        name = server_id.upper().replace("-", "_") + "_TOKEN"
        lines += [f"  {server_id}:", f"    token: ${{{name}}}"]
        env.append(f"{name}={_token(server_id)}")
    (config / "servers.yml").write_text("\n".join(lines) + "\n")
    (config / ".env").write_text("\n".join(env) + "\n")
    os.chmod(config / ".env", 0o600)


def _row(name: str, result: dict[str, Any]) -> str:
    ms = {key: result[key] / 1000 for key in ("p50_us", "p99_us", "max_us")}
    return (
        f"{name:<24}{result['count']:>7}{result['errors']:>8}"
        f"{ms['p50_us']:>9.2f}{ms['p99_us']:>9.2f}{ms['max_us']:>9.2f}"
    )


async def run(servers: int, rate: int, seconds: int, rounds: int) -> int:
    with tempfile.TemporaryDirectory(prefix="network-bench-") as tmp:
        config = Path(tmp) / "config"
        _write_config(config, servers)
        bridge, url = await _start(
            ["-m", "bridge", "serve", "--init", "--config", str(config), "--port", "0"],
            "listening on",
        )
        echo, echo_url = await _start(["-m", "bench.network_bench", "--echo-server"], "echo on")
        try:
            print(f"{servers} servers x {rate} chat lines/s, {seconds} s per run")
            print(f"{'':<24}{'count':>7}{'errors':>8}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}")
            ratios = []
            for _ in range(rounds):
                floor = await measure(echo_url, servers, rate, seconds)
                bridged = await measure(url, servers, rate, seconds)
                print(_row("bare echo", floor))
                print(_row("bridge, 20 servers" if servers == 20 else "bridge", bridged))
                ratios.append(bridged["p99_us"] / floor["p99_us"])
            ratio = statistics.median(ratios)
            verdict = "within" if ratio <= BUDGET else "OVER"
            print(f"verdict p99 / echo p99: {ratio:.2f}x (budget {BUDGET}x: {verdict})")
            return 0
        finally:
            await _stop(echo)
            await _stop(bridge)


async def echo_server() -> None:
    async with serve(_echo, "127.0.0.1", 0, compression=None, max_size=65536) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        print(f"echo on ws://127.0.0.1:{port}/link", flush=True)
        await asyncio.Future()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=20)
    parser.add_argument("--rate", type=int, default=10, help="chat lines per second per server")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--echo-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--failover", action="store_true", help="the failover rows (bench.failover_bench)"
    )
    parser.add_argument(
        "--rows", default=None, help="with --failover: the floor and the rows naming this text"
    )
    args = parser.parse_args(argv)
    if args.failover:
        from bench.failover_bench import run as failover

        return asyncio.run(failover(args.rounds, args.rows))
    if args.echo_server:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(echo_server())
        return 0
    return asyncio.run(run(args.servers, args.rate, args.seconds, args.rounds))


if __name__ == "__main__":
    raise SystemExit(main())
