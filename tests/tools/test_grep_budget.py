"""grep keeps its time budget on every line, however long: a costly pattern over one 4 MiB line
(or over a few hundred long lines) stops at the first check after the deadline and says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.tools import workspace as module
from bridge.tools.workspace import Workspace
from bridge.tools.workspace_paths import Budget

# Nested bounded repeats: RE2's DFA gives up on it, and its slower engine takes seconds a line.
COSTLY = r"((.{1,10}){1,10}){1,10}z"


class SteppingClock:
    """Advances one second per read; counts the reads made once the deadline had passed."""

    def __init__(self) -> None:
        self.now = 0.0
        self.deadline: float | None = None
        self.reads_past_deadline = 0

    def __call__(self) -> float:
        self.now += 1.0
        if self.deadline is not None and self.now >= self.deadline:
            self.reads_past_deadline += 1
        return self.now


def stepping_budget(checks: int) -> tuple[Budget, SteppingClock]:
    clock = SteppingClock()
    budget = Budget.of(float(checks), clock=clock)
    clock.deadline = budget.deadline
    return budget, clock


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("a" * module.MAX_SCAN_BYTES, id="one 4 MiB line"),
        pytest.param(("a" * 20_000 + "\n") * 200, id="200 lines of 20 000 characters"),
    ],
)
def test_a_costly_pattern_over_long_lines_ends_in_a_timeout_result(
    tmp_path: Path, content: str
) -> None:
    (tmp_path / "big.txt").write_text(content)
    budget, clock = stepping_budget(checks=3)
    result = Workspace(tmp_path).grep(COSTLY, "big.txt", budget=budget)
    assert result["timed_out"] is True
    assert result["matches"] == []
    # It stopped at the first check that found the budget spent, not at the end of the line.
    assert clock.reads_past_deadline == 1


def test_a_long_line_is_still_searched_to_its_end_within_the_budget(tmp_path: Path) -> None:
    line = "é" * 50_000 + "needle" + "b" * 50_000
    (tmp_path / "long.txt").write_text("short\n" + line + "\n")
    result = Workspace(tmp_path).grep("needle", "long.txt", budget=Budget.of(60))
    assert result["timed_out"] is False
    [match] = result["matches"]
    assert match["line"] == 2
    assert "needle" in match["text"] and match["text"].startswith("é")
    # Anchors keep their meaning at the edges of the windows a long line is searched in.
    assert Workspace(tmp_path).grep("^b", "long.txt", budget=Budget.of(60))["matches"] == []
    assert len(Workspace(tmp_path).grep("b$", "long.txt", budget=Budget.of(60))["matches"]) == 1
    assert len(Workspace(tmp_path).grep("^é", "long.txt", budget=Budget.of(60))["matches"]) == 1


def test_a_match_across_a_window_edge_is_found(tmp_path: Path) -> None:
    edge = module.GREP_WINDOW_BYTES
    for start in range(edge - 40, edge + 10, 7):
        line = "x" * start + "find-me-across-the-edge" + "y" * (3 * edge)
        (tmp_path / "edge.txt").write_text(line + "\n")
        result = Workspace(tmp_path).grep("find-me-across-the-edge", budget=Budget.of(60))
        assert len(result["matches"]) == 1, start


def test_line_numbers_after_a_redacted_key_block_are_the_files(tmp_path: Path) -> None:
    body = "\n".join("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo" for _ in range(5))
    pem = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----"
    (tmp_path / "k.txt").write_text(f"top\n{pem}\nneedle here\n")
    result = Workspace(tmp_path).grep("needle", "k.txt", budget=Budget.of(60))
    [match] = result["matches"]
    assert match["line"] == 9
