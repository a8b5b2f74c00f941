"""Game facts: a recipe lookup on the plugin side, and the whole tool round trip.

1. Plugin side (``dev.mineclaw.core.gamefacts.FactsBench`` in the testkit jar): ``facts.recipes``
   lookups through the core's index over a registry the size of vanilla's (about 1,400 item
   types, 1,500 recipes, 75 item tags), against a plain scan of the recipe list per lookup in
   the same JVM and run. Both give the same answer (checked for every query first): the same
   name resolution and projection, only the finding differs (the index's maps, or every recipe
   looked at). Printed: microseconds per lookup, the index's build time
   (paid once per registry change) and scan/indexed.
2. Round trip: the real ``LinkServer`` and the testkit JVM (the real plugin core), and
   ``recipe_lookup`` (beacon) and ``item_inspect`` (a player's inventory) called alternately
   through the link tools as a turn calls them. Printed: p50 and p95 of each and the ratio of
   the medians (the recipe lookup reads the registry on the global executor, the inventory on
   the player's own executor; both are one request and one answer on the link).

Run: ``python -m bench.game_facts_bench [--lookups 20000] [--calls 300]`` after ``make java``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bridge.control import init_config_dir
from bridge.control.plane import load_control_plane
from bridge.link.server import LinkServer, LinkSettings
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.link_tools import LinkTools, PlaneWhitelist
from bridge.tools.registry import CallContext
from tests.interaction.link_tools_handler import LinkToolsHandler
from tests.interaction.processes import EVENT_TIMEOUT, TestkitProcess, java_executable

REPO = Path(__file__).resolve().parents[1]
JAR = REPO / "plugin-java" / "testkit" / "target" / "mineclaw-testkit.jar"
TOKEN = "bench-link-token-0123456789abcdefghijklmnopq"
STEVE_UUID = "3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f"
WARMUP = 30


def plugin_side(lookups: int, rounds: int) -> dict[str, Any]:
    done = subprocess.run(
        [
            java_executable(),
            "-cp",
            str(JAR),
            "dev.mineclaw.core.gamefacts.FactsBench",
            str(lookups),
            str(rounds),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


async def round_trips(calls: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "config"
        init_config_dir(config)
        plane = load_control_plane(config, environ={})
        tools = LinkTools(served=lambda: PlaneWhitelist.of(plane), audit=MemoryAudit())
        handler = LinkToolsHandler(tools)
        token_file = Path(folder) / "link.token"
        token_file.write_text(TOKEN, encoding="utf-8")
        async with LinkServer(
            token=TOKEN, handler=handler, settings=LinkSettings(port=0)
        ) as server:
            testkit = await TestkitProcess.start(server.url, token_file)
            try:
                await asyncio.wait_for(handler.linked.wait(), EVENT_TIMEOUT)
                await testkit.wait_event(lambda e: e.get("event") == "link.up")
                await testkit.send(
                    {
                        "op": "player.add",
                        "name": "Steve",
                        "uuid": STEVE_UUID,
                        "held_item": {"material": "minecraft:diamond_sword", "count": 1},
                    }
                )
                await asyncio.wait_for(handler.joined.get(), EVENT_TIMEOUT)
                handlers = tools.handlers()
                cases = {
                    "recipe_lookup": (handlers["recipe_lookup"], {"item": "beacon"}),
                    "item_inspect": (handlers["item_inspect"], {}),
                }
                times: dict[str, list[float]] = {name: [] for name in cases}
                for n in range(WARMUP + calls):
                    for name, (run, arguments) in cases.items():
                        context = CallContext(f"t{n}", "c1", STEVE_UUID, "Steve")
                        start = time.perf_counter()
                        result = await run(arguments, context)
                        elapsed = (time.perf_counter() - start) * 1000
                        assert result, name
                        if n >= WARMUP:
                            times[name].append(elapsed)
                return times
            finally:
                await testkit.shutdown()


def _row(name: str, values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    return f"  {name:<14} p50 {statistics.median(values):7.3f} ms   p95 {p95:7.3f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lookups", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args(argv)
    if not JAR.is_file():
        print(f"no testkit jar at {JAR}: run make java", file=sys.stderr)
        return 2
    side = plugin_side(args.lookups, args.rounds)
    print(
        f"plugin side, {side['recipes']} recipes, {side['items']} items, {side['tags']} tags,"
        f" {side['lookups']} lookups x {side['rounds']} rounds (median round);"
        f" the index is built once per registry change in {side['build_us'] / 1000:.1f} ms:"
    )
    for mix, label in (
        ("named", "names that resolve"),
        ("near_miss", "near misses"),
        ("all", "the mix"),
    ):
        figures = side[mix]
        print(
            f"  {label:<19} indexed {figures['indexed_us']:8.2f} us   plain scan"
            f" {figures['scan_us']:8.2f} us   scan / indexed {figures['scan_over_indexed']:6.2f}x"
        )
    times = asyncio.run(round_trips(args.calls))
    print(f"tool round trip through the link and the testkit JVM, {args.calls} calls each:")
    for name, values in times.items():
        print(_row(name, values))
    ratio = statistics.median(times["recipe_lookup"]) / statistics.median(times["item_inspect"])
    print(f"  recipe_lookup / item_inspect (p50) {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
