"""The queued-start benchmark runs and measures what it says: every round starts one turn
straight from chat and three from the wait line, in both shapes. No timing is asserted here
(the machine is shared); the figures are the benchmark's to print."""

from __future__ import annotations

from pathlib import Path

from bench import queue_bench
from bench.local_provider import providers_yml
from bridge.control import init_config_dir


async def test_each_round_times_one_direct_start_and_three_queued_starts(tmp_path: Path) -> None:
    config = tmp_path / "config"
    init_config_dir(config)
    (config / "providers.yml").write_text(providers_yml("http://127.0.0.1:9/v1"))
    rounds = 3
    for case in queue_bench.CASES:
        timings = await queue_bench.measure(config, case, rounds)
        assert len(timings.direct) == rounds
        assert len(timings.queued) == 3 * rounds
        assert all(value >= 0 for value in timings.direct + timings.queued)
