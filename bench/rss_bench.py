"""Resident memory of the bridge process at rest and with a full session.

Starts ``python -m bridge serve`` as a child process against a local SSE provider, links the
testkit JVM to it, and reads the child's ``VmRSS``/``VmHWM`` from ``/proc``: once at rest
(linked, nothing asked yet), then after enough turns to fill the session's replay window
(``context.max_messages``, 240 by default: 120 question/answer turns). Then a second bridge
with every optional section on (an MCP server over stdio, the console, the web tools, the
metrics endpoint) at rest, to show what those cost an owner who enables them. For scale, the
same figure of a bare Python interpreter that imported the bridge's dependencies is printed
too, measured in the same run. Budgets: defaults at rest 70 MB, with a full session 120 MB.

Run: ``python -m bench.rss_bench [--turns 120]`` after ``make java``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import re
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.link_bench import JAR, Testkit
from bench.local_provider import BENCH_CONFIG, provider_process, providers_yml
from bridge.control import init_config_dir

REPO = Path(__file__).resolve().parents[1]
BUDGET_REST_MB = 70.0
BUDGET_FULL_MB = 120.0
START_TIMEOUT = 60.0
RETRIES = 50
IMPORTS_ONLY = (
    "import httpx, pydantic, websockets, yaml, re2, jsonschema, sys; sys.stdout.write('ready\\n'); "
    "sys.stdout.flush(); sys.stdin.read()"
)


def memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` in MB."""
    status = Path(f"/proc/{pid}/status").read_text()
    found = dict(re.findall(r"^(VmRSS|VmHWM):\s+(\d+) kB", status, re.MULTILINE))
    return int(found["VmRSS"]) / 1024, int(found["VmHWM"]) / 1024


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def everything_on() -> str:
    """config.yml with each optional section enabled (the bench's rate limits kept)."""
    echo = REPO / "bench" / "mcp_echo_server.py"
    return BENCH_CONFIG + (
        f"console:\n  enabled: true\n  port: {free_port()}\n"
        f"metrics:\n  enabled: true\n  port: {free_port()}\n"
        "web:\n  enabled: true\n"
        "mcp:\n  enabled: true\n  servers:\n    echo:\n      transport: stdio\n"
        f"      command: {json.dumps(sys.executable)}\n      args: [{json.dumps(str(echo))}]\n"
    )


def _is_outcome_of(ref: str, event: dict[str, Any]) -> bool:
    return event.get("event") == "chat.outcome" and event.get("ref") == ref


async def baseline_mb() -> float:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", IMPORTS_ONLY,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        await asyncio.wait_for(process.stdout.readline(), START_TIMEOUT)
        return memory_mb(process.pid)[0]
    finally:
        assert process.stdin is not None
        process.stdin.close()
        await asyncio.wait_for(process.wait(), START_TIMEOUT)


async def start_bridge(config: Path) -> tuple[asyncio.subprocess.Process, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bridge", "serve", "--init", "--config", str(config), "--port", "0",
        cwd=REPO, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdout is not None
    async with asyncio.timeout(START_TIMEOUT):
        while line := (await process.stdout.readline()).decode():
            found = re.match(r"listening on (ws://\S+)", line)
            if found:
                return process, found.group(1)
    process.kill()
    raise RuntimeError("the bridge did not start")


async def fill_session(testkit: Testkit, turns: int) -> None:
    await testkit.send(
        {
            "op": "player.add",
            "name": "Steve",
            "permissions": ["mineclaw.command.chat", "mineclaw.bypass.ratelimit"],
        }
    )
    for number in range(turns):
        # A player holds one place in line: on a loaded machine the bench can ask while its
        # previous question still waits, which is refused; it asks again after the next line.
        for attempt in range(RETRIES):
            ref = f"q{number}.{attempt}"
            await testkit.send(
                {"op": "chat", "player": "Steve", "text": f"@ai q {number}", "ref": ref}
            )
            outcome = await testkit.until(functools.partial(_is_outcome_of, ref))
            await testkit.until(_broadcast)
            if outcome["outcome"] == "public":
                break
        else:
            raise RuntimeError(f"turn {number} was refused {RETRIES} times: {outcome}")


def _broadcast(event: dict[str, Any]) -> bool:
    return event.get("event") == "message" and event.get("to") == "*"


async def run(turns: int) -> int:
    if not JAR.is_file():
        print(f"the testkit jar {JAR} is missing: run `make java` first", file=sys.stderr)
        return 1
    base = await baseline_mb()
    # About 600 characters per answer, a realistic chat reply.
    async with provider_process(chunks=30, text="mine the ore, smelt it. ") as provider_url:
        with tempfile.TemporaryDirectory(prefix="rss-bench-") as tmp:
            config = Path(tmp) / "config"
            init_config_dir(config)
            (config / "config.yml").write_text(BENCH_CONFIG)
            (config / "providers.yml").write_text(providers_yml(provider_url))
            bridge, url = await start_bridge(config)
            try:
                testkit = await Testkit.start(url, config / "link.token")
                try:
                    rest, _ = memory_mb(bridge.pid)
                    await fill_session(testkit, turns)
                    full, peak = memory_mb(bridge.pid)
                finally:
                    await testkit.stop()
            finally:
                bridge.terminate()
                await asyncio.wait_for(bridge.wait(), START_TIMEOUT)
            everything = Path(tmp) / "everything"
            init_config_dir(everything)
            (everything / "config.yml").write_text(everything_on())
            (everything / "providers.yml").write_text(providers_yml(provider_url))
            bridge, url = await start_bridge(everything)
            try:
                testkit = await Testkit.start(url, everything / "link.token")
                try:
                    rest_all, _ = memory_mb(bridge.pid)
                finally:
                    await testkit.stop()
            finally:
                bridge.terminate()
                await asyncio.wait_for(bridge.wait(), START_TIMEOUT)
    print(f"bridge RSS, child process, /proc; {turns} turns ({2 * turns} session messages)")
    rows = [
        ("python with the bridge's dependencies imported", base, "for scale"),
        ("at rest, linked, defaults", rest, f"budget {BUDGET_REST_MB:.0f}"),
        ("at rest, linked, every optional section on", rest_all, "what enabling costs"),
        ("with the session full", full, f"budget {BUDGET_FULL_MB:.0f}"),
        ("peak (VmHWM)", peak, ""),
    ]
    for name, value, note in rows:
        print(f"{name:<48}{value:7.1f} MB  {note}")
    within = rest < BUDGET_REST_MB and full < BUDGET_FULL_MB
    print("within the budgets" if within else "OVER a budget")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=120, help="turns to fill the session")
    args = parser.parse_args(argv)
    try:
        return asyncio.run(run(max(1, min(args.turns, 2000))))
    except RuntimeError as exc:
        print(f"rss bench failed: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
