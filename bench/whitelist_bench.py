"""Whitelist decision cost: 2x256 realistic rules against baselines measured in the same run.

Run: ``python -m bench.whitelist_bench``. Prints p50/p99 per decision for the full whitelist,
for a one-rule whitelist and for a plain ``str.startswith`` scan over 512 prefixes (what a naive
prefix whitelist would cost), then the pathological case: a catastrophic-backtracking pattern
at input sizes n and 4n, whose time ratio stays near 4 (linear) instead of exploding.
"""

from __future__ import annotations

import functools
import gc
import random
import re
import time
from collections.abc import Callable

from bridge.policy.whitelist import RuleSet, Whitelist

BUDGET_P99_US = 50.0
DECISIONS = 20_000
NAME = "[A-Za-z0-9_]{3,16}"
COORD = "-?[0-9]{1,7}"


def realistic_rules(count: int, prefix: str) -> list[str]:
    """Rules shaped like real server whitelists: a root, fixed words and bounded arguments."""
    shapes = [
        "time set (day|night|noon|midnight)",
        "weather (clear|rain|thunder)( [0-9]{1,6})?",
        f"give {NAME} minecraft:(bread|torch|cooked_beef|oak_log) ([1-9]|[1-5][0-9]|6[0-4])",
        f"tp {NAME} {COORD} -?[0-9]{{1,3}} {COORD}",
        "warp (spawn|shop|arena[0-9]{1,2})",
        f"effect give {NAME} minecraft:(speed|night_vision) [0-9]{{1,3}}( [0-4])?",
        f"msg {NAME} [^§]{{1,200}}",
        "gamerule (doDaylightCycle|doWeatherCycle) (true|false)",
    ]
    rules: list[str] = []
    for index in range(count):
        root, _, rest = shapes[index % len(shapes)].partition(" ")
        # Distinct roots per rule (plugins register many commands), same argument shapes.
        generation = index // len(shapes)
        rules.append(f"{prefix}{root}{generation or ''} {rest}")
    return rules


def realistic_commands(seed: int) -> list[str]:
    rng = random.Random(seed)
    commands = []
    for _ in range(200):
        commands += [
            f"/time set {rng.choice(['day', 'night', 'dawn'])}",
            f"give Steve_{rng.randrange(100)} minecraft:bread {rng.randrange(1, 80)}",
            f"tp Alex {rng.randrange(-9999, 9999)} 64 {rng.randrange(-9999, 9999)}",
            f"warp{rng.randrange(40)} arena{rng.randrange(120)}",
            "msg Notch " + " ".join(["hello there"] * rng.randrange(1, 15)),
            f"op Player{rng.randrange(100)}",
            f"minecraft:give Steve minecraft:diamond {rng.randrange(64)}",
        ]
    rng.shuffle(commands)
    return commands


def percentiles(samples_ns: list[int]) -> tuple[float, float]:
    ordered = sorted(samples_ns)
    p50 = ordered[len(ordered) // 2] / 1000
    p99 = ordered[int(len(ordered) * 0.99)] / 1000
    return p50, p99


def time_interleaved(
    deciders: list[Callable[[str], object]], commands: list[str], rounds: int
) -> list[list[int]]:
    """Per-call nanoseconds for each decider. The series run in alternating blocks, so noise
    from the shared machine lands on every series alike while each block keeps its own caches
    warm (as a bridge deciding many commands would)."""
    samples: list[list[int]] = [[] for _ in deciders]
    clock = time.perf_counter_ns
    block = 1000
    gc.disable()  # as timeit does: collector pauses belong to the whole process, not a decision
    try:
        for first in range(0, rounds, block):
            for series, decide in zip(samples, deciders, strict=True):
                for index in range(first, min(first + block, rounds)):
                    command = commands[index % len(commands)]
                    start = clock()
                    decide(command)
                    series.append(clock() - start)
    finally:
        gc.enable()
    return samples


def total_time(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(9):
        start = time.perf_counter()
        for _ in range(repeat):
            run()
        best = min(best, time.perf_counter() - start)
    return best / repeat


def main() -> None:
    player = realistic_rules(256, prefix="")
    console = realistic_rules(256, prefix="c")
    full = Whitelist(player=player, console=console)
    single = Whitelist(player=["time set day"])
    prefixes = tuple(rule.split(" ")[0] + " " for rule in player + console)
    commands = realistic_commands(seed=3)
    allowed = sum(full.decide("player", c).allowed for c in commands)

    def scan(command: str) -> bool:
        text = command.removeprefix("/")
        return any(text.startswith(prefix) for prefix in prefixes)

    # Warm-up, so the first samples do not pay for lazy initialisation.
    for command in commands * 3:
        full.decide("player", command)
        single.decide("player", command)
    full_ns, one_ns, scan_ns = time_interleaved(
        [lambda c: full.decide("player", c), lambda c: single.decide("player", c), scan],
        commands,
        DECISIONS,
    )
    full_p50, full_p99 = percentiles(full_ns)
    one_p50, one_p99 = percentiles(one_ns)
    scan_p50, scan_p99 = percentiles(scan_ns)

    print(
        f"whitelist decision, {len(player)}+{len(console)} rules, {DECISIONS} decisions "
        f"({allowed}/{len(commands)} sample commands allowed)"
    )
    print(f"  full whitelist        p50 {full_p50:7.2f} us   p99 {full_p99:7.2f} us")
    print(
        f"  one-rule whitelist    p50 {one_p50:7.2f} us   p99 {one_p99:7.2f} us"
        f"   full/one p99 ratio {full_p99 / one_p99:5.2f}x"
    )
    print(
        f"  startswith scan (512) p50 {scan_p50:7.2f} us   p99 {scan_p99:7.2f} us"
        f"   full/scan p99 ratio {full_p99 / scan_p99:5.2f}x"
    )
    verdict = "within" if full_p99 < BUDGET_P99_US else "OVER"
    print(f"  budget p99 < {BUDGET_P99_US:.0f} us: {verdict}")

    print("pathological pattern (a+)+b and (a|aa)*c on 'say aaa...a!' (no match)")
    evil = Whitelist(player=["say (a+)+b", "say (a|aa)*c"])
    per_size: dict[int, float] = {}
    for n in (60, 240):
        command = "say " + "a" * n + "!"
        per_size[n] = total_time(functools.partial(evil.decide, "player", command), 2000)
        print(f"  command level n={n:4d}: {per_size[n] * 1e6:7.2f} us")
    print(
        f"  ratio 4n/n at command level: {per_size[240] / per_size[60]:5.2f}x"
        " (fixed per-decision costs included)"
    )
    engine = RuleSet(["say (a+)+b", "say (a|aa)*c"])
    short_input, long_input = "say " + "a" * 20_000 + "!", "say " + "a" * 80_000 + "!"
    base = total_time(lambda: engine.first_match(short_input), 50)
    quad = total_time(lambda: engine.first_match(long_input), 50)
    print(
        f"  engine n=20000: {base * 1e6:8.1f} us, n=80000: {quad * 1e6:8.1f} us,"
        f" ratio {quad / base:5.2f}x (linear is 4x; {quad * 1e9 / 80_000:.2f} ns per character)"
    )
    backtracking = re.compile("say (a+)+b")
    slow_small = total_time(lambda: backtracking.fullmatch("say " + "a" * 14 + "!"), 3)
    slow_large = total_time(lambda: backtracking.fullmatch("say " + "a" * 18 + "!"), 3)
    print(
        f"  for contrast, Python re: n=14 {slow_small * 1e3:7.2f} ms,"
        f" n=18 {slow_large * 1e3:7.2f} ms"
        f" (ratio {slow_large / slow_small:5.1f}x for +4 characters)"
    )


if __name__ == "__main__":
    main()
