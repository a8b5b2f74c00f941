"""The budgets' clock of ``serve``: the real time, or (tests) a time read from a file."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bridge.cli.clock_file import CLOCK_FILE_ENV, budget_clock
from bridge.errors import ConfigError


def test_without_the_variable_the_clock_is_the_real_time() -> None:
    before = datetime.now(UTC)
    assert before <= budget_clock({})() <= datetime.now(UTC)


def test_the_file_is_read_at_every_reading(tmp_path: Path) -> None:
    path = tmp_path / "now.txt"
    path.write_text("2026-12-03T23:59:00+00:00\n")
    clock = budget_clock({CLOCK_FILE_ENV: str(path)})
    assert clock() == datetime(2026, 12, 3, 23, 59, tzinfo=UTC)
    path.write_text("2026-12-04T00:00:01+01:00")
    assert clock() == datetime(2026, 12, 3, 23, 0, 1, tzinfo=UTC)
    path.write_text("not a time")  # broken later: the real time, never a crash
    assert clock().year >= 2024


@pytest.mark.parametrize("content", [None, "2026-12-03T23:59:00", "yesterday"])
def test_a_missing_or_bad_file_stops_the_start_naming_the_variable(
    tmp_path: Path, content: str | None
) -> None:
    path = tmp_path / "now.txt"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError, match=CLOCK_FILE_ENV):
        budget_clock({CLOCK_FILE_ENV: str(path)})
