"""The console against a million audit rows, and what a browser paging it costs the chat.

1. **Audit pages**: a console serving an audit log of ``--rows`` events (one million by default,
   a month of a busy server: 6 kinds, 200 players, 20 tools, 3 servers) answers ``GET /audit``
   for each filter shape the page offers (none, player, tool, server, outcome, kind, player and
   kind, a time window, a deep cursor), the first page and the older pages after it, over real
   HTTP on loopback, rendered. Budget: p95 under 200 ms for every shape.
2. **Chat verdicts**: the testkit JVM (the real plugin core) sends listen-mode chat at
   ``--rate`` lines a second to the bridge (``LinkServer`` over the network, the console
   serving), each timed to its verdict (a refusal with its notice, the costliest), with
   nobody on the console and then with headless Chromium paging the audit log the whole time
   (``bench.console_pager``, a process of its own, as a browser is). The rounds alternate and
   the median ratio of the p99s counts. Budget: at most 1.1x (issue 48; the console serves
   from a process of its own, `bridge.app.console.console_process`).

Run: ``python -m bench.console_bench [--rows 1000000] [--rate 200] [--seconds 10]
[--rounds 3]`` after ``make java`` (the testkit jar) and ``make install`` (chromium).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from bench.link_bench import JAR, WARMUP_SECONDS, Testkit, _row
from bench.local_provider import BENCH_CONFIG
from bridge.app.console.console_process import ConsoleProcess
from bridge.app.network.network import Network
from bridge.app.serving.storage_settings import storage_target
from bridge.control import init_config_dir
from bridge.link.auth import ensure_token_file, read_token
from bridge.link.server import LinkServer, LinkSettings
from bridge.store.audit import AuditLog
from bridge.store.target import StorageTarget

PAGE_BUDGET_MS = 200.0
VERDICT_BUDGET = 1.1
START = datetime(2026, 11, 1, tzinfo=UTC)
SPAN = timedelta(days=29)  # the events spread over a month, however many there are
PLAYERS = 200
TOOLS = 20
PAGES_PER_SHAPE = 24
SHAPES: tuple[tuple[str, dict[str, str]], ...] = (
    ("no filter", {}),
    ("player", {"player": "player7"}),
    ("tool", {"tool": "tool3"}),
    ("server", {"server": "lobby"}),
    ("outcome", {"outcome": "deny"}),
    ("kind", {"kind": "run_command.decision"}),
    ("player and kind", {"player": "player42", "kind": "tool.invoke"}),
    ("time window", {"since": "2026-11-20", "until": "2026-11-21"}),
)
CONSOLE_CONFIG = "console:\n  enabled: true\n  port: 25590\n"


def _events(rows: int) -> Iterator[tuple[str, str, str]]:
    fields: dict[str, object]
    chance = random.Random(35)
    step = SPAN / rows
    for n in range(rows):
        at = (START + n * step).isoformat()
        player = f"player{chance.randrange(PLAYERS)}"
        tool = f"tool{chance.randrange(TOOLS)}"
        server = chance.choice(("lobby", "survival", "creative"))
        which = n % 6
        if which == 0:
            kind, fields = "tool.invoke", {"player": player, "tool": tool, "status": "ok"}
        elif which == 1:
            verdict = "deny" if chance.random() < 0.1 else "allow"
            kind = "run_command.decision"
            fields = {"requester": player, "command": f"give {player} bread 2", "verdict": verdict}
        elif which == 2:
            kind = "function.end"
            fields = {"function": tool, "status": "ok", "duration_ms": 12.5}
        elif which == 3:
            kind, fields = "approval.answer", {"sender": player, "verdict": "approved"}
        elif which == 4:
            kind, fields = "turn.start", {"player": player, "server": server}
        else:
            kind, fields = "web.fetch", {"player": player, "tool": "web_fetch", "status": "ok"}
        yield at, kind, json.dumps(fields, sort_keys=True)


def fill_audit(data_dir: Path, rows: int) -> float:
    """``rows`` events written straight into a migrated audit table; the seconds it took."""
    started = time.perf_counter()
    AuditLog.in_data_dir(data_dir).close()  # the schema and its indexes, as the bridge makes them
    with sqlite3.connect(data_dir / "audit.sqlite3") as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executemany(
            "INSERT INTO audit_events (at, kind, fields_json) VALUES (?, ?, ?)", _events(rows)
        )
    return time.perf_counter() - started


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def page_timings(url: str, link: str, rows: int) -> dict[str, list[float]]:
    """Milliseconds of each ``GET /audit`` per shape: the first page, then older ones."""
    timings: dict[str, list[float]] = {}
    chance = random.Random(7)
    with httpx.Client(base_url=url, timeout=120.0) as client:
        client.get(link.removeprefix(url)).raise_for_status()
        for name, query in (*SHAPES, ("deep cursor", {})):
            spent: list[float] = []
            params: dict[str, Any] = dict(query)
            if name == "deep cursor":
                params["before"] = chance.randrange(rows // 10, rows)
            for _ in range(PAGES_PER_SHAPE):
                started = time.perf_counter()
                answer = client.get("/audit", params=params)
                spent.append((time.perf_counter() - started) * 1000)
                answer.raise_for_status()
                older = re.search(r'href="/audit\?[^"]*before=(\d+)[^"]*" id="older"', answer.text)
                if name == "deep cursor":
                    params["before"] = chance.randrange(rows // 10, rows)
                elif older is not None:
                    params["before"] = int(older.group(1))
                else:
                    params = dict(query)
            timings[name] = spent
    return timings


class Pager:
    """``bench.console_pager`` in its own process: Chromium paging the audit log."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, how: str, url: str, link: str, pace: float) -> Pager:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bench.console_pager", how, url, link, str(pace),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert process.stdout is not None
        ready = await asyncio.wait_for(process.stdout.readline(), 120)
        if ready.strip() != b"ready":
            raise RuntimeError(f"the pager did not start: {ready!r}")
        return cls(process)

    async def stop(self) -> int:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        pages = await asyncio.wait_for(self.process.stdout.readline(), 120)
        await self.process.wait()
        return int(pages or 0)


async def verdicts(
    network: Network, url: str, token_file: Path, rate: int, seconds: int
) -> dict[str, Any]:
    testkit = await Testkit.start(url, token_file)
    try:
        # Listen mode belongs to the linked server instance: on again for each testkit.
        network.default.runtime.listen.set(True)
        await network.default.app.send_link_state()
        await testkit.bench_chat(rate, WARMUP_SECONDS, "warmup")
        cpu_before = time.process_time()
        result = await testkit.bench_chat(rate, seconds, "measured")
        result["cpu_us"] = (time.process_time() - cpu_before) * 1e6 / max(result["count"], 1)
        return result
    finally:
        await testkit.stop()


def _link(config: Path, network: Network, console_url: str) -> str:
    target: StorageTarget = storage_target(network.default.runtime.plane, config)
    with target.open_console_logins() as logins:
        token = logins.issue("viewer", "bench", valid_for=timedelta(minutes=30))
    return f"{console_url}/login?token={token}"


async def run(rows: int, rate: int, seconds: int, rounds: int, pager: str, pace: float) -> int:
    if not JAR.is_file():
        print(f"the testkit jar {JAR} is missing: run `make java` first", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="console-bench-") as tmp:
        config = Path(tmp) / "config"
        init_config_dir(config)
        (config / "config.yml").write_text(BENCH_CONFIG + CONSOLE_CONFIG)
        token_file = ensure_token_file(config)
        filled = fill_audit(config / "data", rows)
        print(f"audit log: {rows} events written and indexed in {filled:.1f} s")
        network = Network.open(config, default_token=read_token(token_file))
        server = LinkServer(servers=network, settings=LinkSettings(port=0))
        await server.start()
        console = await ConsoleProcess.start(network, config, port=0)
        try:
            link = _link(config, network, console.url)
            timings = await asyncio.to_thread(page_timings, console.url, link, rows)
            print(f"GET /audit over {rows} events, {PAGES_PER_SHAPE} pages a shape (ms):")
            print(f"{'':<18}{'p50':>9}{'p95':>9}{'max':>9}")
            worst = 0.0
            for name, spent in timings.items():
                p95 = _percentile(spent, 0.95)
                worst = max(worst, p95)
                print(f"{name:<18}{statistics.median(spent):>9.1f}{p95:>9.1f}{max(spent):>9.1f}")
            verdict = "within" if worst < PAGE_BUDGET_MS else "OVER"
            print(f"worst p95: {worst:.1f} ms; {verdict} budget {PAGE_BUDGET_MS:.0f} ms")

            print(f"listen-mode verdicts, {rate}/s for {seconds} s, testkit JVM client")
            header = (
                f"{'count':>7}{'errors':>8}{'p50 ms':>9}{'p99 ms':>9}"
                f"{'max ms':>9}{'cpu us/req':>11}"
            )
            print(f"{'':<26}{header}")
            quiet: list[dict[str, Any]] = []
            paged: list[dict[str, Any]] = []
            pages_read = 0
            for _ in range(rounds):
                quiet.append(await verdicts(network, server.url, token_file, rate, seconds))
                print(_row("console idle", quiet[-1]), flush=True)
                paging = await Pager.start(
                    pager, console.url, _link(config, network, console.url), pace
                )
                try:
                    paged.append(await verdicts(network, server.url, token_file, rate, seconds))
                finally:
                    pages = await paging.stop()
                pages_read += pages
                print(_row(f"{pager} paging ({pages} pages)", paged[-1]), flush=True)
        finally:
            await console.close()
            await server.close()
            await network.aclose()
    errors = sum(r["errors"] for r in quiet + paged)
    ratios = [p["p99_us"] / max(q["p99_us"], 1) for q, p in zip(quiet, paged, strict=True)]
    ratio = statistics.median(ratios)
    shown = ", ".join(f"{r:.2f}" for r in ratios)
    within = "within" if ratio <= VERDICT_BUDGET else "OVER"
    print(
        f"p99 ratio paging/idle: {ratio:.2f} (rounds: {shown}; {pages_read} audit pages read);"
        f" {within} budget {VERDICT_BUDGET}"
    )
    if errors:
        print(f"{errors} requests failed", file=sys.stderr)
    return 1 if errors else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=1_000_000, help="audit events")
    parser.add_argument("--rate", type=int, default=200, help="chat requests per second")
    parser.add_argument("--seconds", type=int, default=10, help="measured seconds per round")
    parser.add_argument("--rounds", type=int, default=3, help="idle/paging pairs")
    parser.add_argument(
        "--pager",
        choices=("chromium", "http", "elsewhere"),
        default="chromium",
        help="who pages: headless Chromium; a plain HTTP client as fast as it can; or Chromium"
        " loading copies of the pages from a server of its own (the browser's cost alone)",
    )
    parser.add_argument(
        "--pace",
        type=float,
        default=0.0,
        help="pages a second of the http pager (0: as fast as the console answers)",
    )
    args = parser.parse_args(argv)
    try:
        return asyncio.run(
            run(
                max(1_000, args.rows),
                args.rate,
                min(args.seconds, 120),
                max(1, min(args.rounds, 10)),
                args.pager,
                max(0.0, args.pace),
            )
        )
    except RuntimeError as exc:
        print(f"console bench failed: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
