"""Run every benchmark (or those named on the command line), each in its own process.

A separate process per benchmark keeps one benchmark's imports, threads and garbage from
skewing the next one's figures.
"""

from __future__ import annotations

import subprocess
import sys

# Append new benchmarks here; each runs as ``python -m <module>``.
BENCHMARKS: tuple[str, ...] = (
    "bench.link_bench",
    "bench.provider_bench",
    "bench.whitelist_bench",
    "bench.reload_bench",
    "bench.function_bench",
    "bench.turn_bench",
    "bench.queue_bench",
    "bench.verdict_load_bench",
    "bench.first_frame_bench",
    "bench.rss_bench",
    "bench.store_bench",
    "bench.prefix_bench",
    "bench.network_bench",
    "bench.listen_bench",
    "bench.web_bench",
    "bench.game_facts_bench",
    "bench.memory_bench",
    "bench.console_bench",
    "bench.mcp_bench",
)


def main(argv: list[str]) -> int:
    chosen = [m for m in BENCHMARKS if not argv or any(name in m for name in argv)]
    if not chosen:
        print(f"no benchmark matches {' '.join(argv)}; known: {', '.join(BENCHMARKS)}")
        return 2
    failed = []
    for module in chosen:
        print(f"== {module}", flush=True)
        if subprocess.run([sys.executable, "-m", module], check=False).returncode != 0:
            failed.append(module)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
