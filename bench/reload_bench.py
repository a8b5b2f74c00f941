"""Full reload of the default control plane, against parsing the same files alone.

Run: ``python -m bench.reload_bench``. The baseline is ``yaml.safe_load`` of the six YAML
files (no strictness, no validation), measured in the same run, so the ratio shows what the
strict reader, the models, the cross-file rules and whitelist compilation add. The runtime's
reload is timed too: the plane and everything it serves (tool registry, wake rules, clients
reused), as ``/mineclaw reload`` pays it, plus the first turn snapshot of the new version.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from bridge.app.wiring.runtime import Runtime
from bridge.control import ControlPlaneStore, init_config_dir
from bridge.control.layout import YAML_FILES

BUDGET_MS = 50.0
ROUNDS = 60


def timings(run: Callable[[], object], rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) * 1000)
    return sorted(samples)


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch) / "config"
        init_config_dir(directory)
        environ = {"OPENAI_API_KEY": "sk-bench"}
        store = ControlPlaneStore(directory, environ=environ)
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        def parse_only() -> None:
            for name in YAML_FILES:
                yaml.load((directory / name).read_bytes(), Loader=loader)

        runtime = Runtime.open(directory, environ=environ)

        def runtime_reload() -> None:
            runtime.reload()
            runtime.snapshot(["mineclaw.command.chat"])

        store.reload()
        parse_only()
        runtime_reload()
        reload_ms = timings(store.reload, ROUNDS)
        parse_ms = timings(parse_only, ROUNDS)
        runtime_ms = timings(runtime_reload, ROUNDS)
        asyncio.run(runtime.aclose())

    def p(samples: list[float], q: float) -> float:
        return samples[min(len(samples) - 1, int(len(samples) * q))]

    print(f"control-plane reload of the default folder, {ROUNDS} rounds")
    rows = (
        ("full reload", reload_ms),
        ("yaml.safe_load x6", parse_ms),
        ("runtime reload", runtime_ms),
    )
    for label, samples in rows:
        median, p99 = p(samples, 0.5), p(samples, 0.99)
        print(f"  {label:18s} median {median:6.2f} ms   p99 {p99:6.2f} ms")
    print(f"  ratio full/parse-only (median): {p(reload_ms, 0.5) / p(parse_ms, 0.5):5.2f}x")
    print(f"  ratio runtime/full (median):    {p(runtime_ms, 0.5) / p(reload_ms, 0.5):5.2f}x")
    verdict = "within" if p(reload_ms, 0.99) < BUDGET_MS else "OVER"
    print(f"  budget < {BUDGET_MS:.0f} ms: {verdict} (final version {store.current.version})")


if __name__ == "__main__":
    main()
