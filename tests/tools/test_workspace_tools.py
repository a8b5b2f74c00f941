"""list, read and grep on an ordinary workspace: content, ordering, limits and time budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.tools.results import ErrorCode, ToolFailure
from bridge.tools.workspace import Workspace, WorkspaceLimits
from bridge.tools.workspace_paths import Budget


class CountingClock:
    """Advances one second each time it is read, so a budget runs out after N checks."""

    def __init__(self) -> None:
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return float(self.reads)


def budget() -> Budget:
    return Budget.of(60)


def test_list_one_level_is_sorted_with_types_and_sizes(workspace: Workspace) -> None:
    result = workspace.list_folder("", budget=budget())
    assert result["entries"] == [
        {"path": "AGENTS.md", "type": "file", "size": 29},
        {"path": "config.yml", "type": "file", "size": 32},
        {"path": "notes", "type": "folder"},
        {"path": "skills", "type": "folder"},
    ]
    assert (result["path"], result["truncated"], result["timed_out"]) == (".", False, False)


def test_list_deeper_and_from_a_subfolder(workspace: Workspace) -> None:
    result = workspace.list_folder("notes/", depth=3, budget=budget())
    assert [e["path"] for e in result["entries"]] == [
        "notes/deep",
        "notes/deep/far.txt",
        "notes/spawn.txt",
    ]


def test_list_never_walks_past_max_depth(workspace_dir: Path) -> None:
    (workspace_dir / "a" / "b" / "c").mkdir(parents=True)
    (workspace_dir / "a" / "b" / "c" / "too-deep.txt").write_text("x")
    shallow = Workspace(workspace_dir, limits=WorkspaceLimits(max_depth=2))
    paths = [e["path"] for e in shallow.list_folder("", depth=8, budget=budget())["entries"]]
    assert "a/b" in paths
    assert not any(path.startswith("a/b/") for path in paths)
    with pytest.raises(ToolFailure) as caught:
        shallow.read_file("a/b/c", budget=budget())
    assert caught.value.code is ErrorCode.PATH_REFUSED


def test_list_stops_at_max_results_and_says_so(workspace_dir: Path) -> None:
    for index in range(10):
        (workspace_dir / "skills" / f"s{index}.md").write_text("x")
    small = Workspace(workspace_dir, limits=WorkspaceLimits(max_results=4))
    result = small.list_folder("skills", budget=budget())
    assert len(result["entries"]) == 4 and result["truncated"] is True


def test_read_pages_with_offset_and_max_read_chars(workspace_dir: Path) -> None:
    (workspace_dir / "long.txt").write_text("0123456789" * 40)
    small = Workspace(workspace_dir, limits=WorkspaceLimits(max_read_chars=256))
    first = small.read_file("long.txt", budget=budget())
    assert (len(first["text"]), first["next_offset"], first["truncated"]) == (256, 256, True)
    second = small.read_file("long.txt", offset=first["next_offset"], budget=budget())
    assert second["text"] == ("0123456789" * 40)[256:]
    assert (second["next_offset"], second["truncated"]) == (None, False)


def test_read_counts_characters_not_bytes(workspace_dir: Path) -> None:
    (workspace_dir / "utf8.txt").write_text("é" * 300)
    small = Workspace(workspace_dir, limits=WorkspaceLimits(max_read_chars=256))
    assert small.read_file("utf8.txt", budget=budget())["text"] == "é" * 256


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("missing.txt", ErrorCode.NOT_FOUND),
        ("notes/missing/x.txt", ErrorCode.NOT_FOUND),
        ("notes", ErrorCode.NOT_A_FILE),
        ("", ErrorCode.NOT_A_FILE),
        ("notes/spawn.txt/inner", ErrorCode.NOT_A_DIRECTORY),
        ("binary.bin", ErrorCode.NOT_A_FILE),
    ],
)
def test_read_refusals_name_the_problem(workspace: Workspace, path: str, code: ErrorCode) -> None:
    (workspace.directory / "binary.bin").write_bytes(b"\x7fELF\x00\x01\x02")
    with pytest.raises(ToolFailure) as caught:
        workspace.read_file(path, budget=budget())
    assert caught.value.code is code


def test_invalid_utf8_is_replaced_not_fatal(workspace_dir: Path, workspace: Workspace) -> None:
    (workspace_dir / "latin1.txt").write_bytes(b"caf\xe9\n")
    assert workspace.read_file("latin1.txt", budget=budget())["text"] == "caf\ufffd\n"


def test_grep_finds_lines_with_numbers_across_folders(workspace: Workspace) -> None:
    result = workspace.grep(r"(?i)NETHER|deep", "", budget=budget())
    assert result["matches"] == [
        {"path": "notes/deep/far.txt", "line": 1, "text": "deep note"},
        {"path": "notes/spawn.txt", "line": 2, "text": "nether hub at 10 70 -3"},
    ]
    assert result["files_searched"] == 4
    assert (result["truncated"], result["timed_out"]) == (False, False)


def test_grep_on_one_file(workspace: Workspace) -> None:
    result = workspace.grep("spawn", "notes/spawn.txt", budget=budget())
    assert [(m["path"], m["line"]) for m in result["matches"]] == [("notes/spawn.txt", 1)]


def test_grep_stops_at_max_results(workspace_dir: Path) -> None:
    (workspace_dir / "many.txt").write_text("hit\n" * 50)
    small = Workspace(workspace_dir, limits=WorkspaceLimits(max_results=5))
    result = small.grep("hit", "", budget=budget())
    assert len(result["matches"]) == 5 and result["truncated"] is True


def test_grep_bounds_long_lines_around_the_match(workspace_dir: Path, workspace: Workspace) -> None:
    (workspace_dir / "wide.txt").write_text("x" * 5000 + "NEEDLE" + "y" * 5000)
    (match,) = workspace.grep("NEEDLE", "wide.txt", budget=budget())["matches"]
    assert len(match["text"]) == 240 and "NEEDLE" in match["text"]


def test_grep_stops_at_its_time_budget_and_says_so(workspace_dir: Path) -> None:
    for index in range(30):
        (workspace_dir / "notes" / f"f{index:02}.txt").write_text("hit\n")
    clock = CountingClock()
    limited = Budget(deadline=clock() + 10, clock=clock)
    result = Workspace(workspace_dir).grep("hit", "notes", budget=limited)
    assert result["timed_out"] is True
    assert 0 < len(result["matches"]) < 30


def test_grep_refuses_an_invalid_or_backtracking_pattern(workspace: Workspace) -> None:
    for pattern in ("(unclosed", r"(a)\1", r"x(?=y)"):
        with pytest.raises(ToolFailure) as caught:
            workspace.grep(pattern, "", budget=budget())
        assert caught.value.code is ErrorCode.INVALID_ARGUMENTS
        assert "RE2" in caught.value.message


def test_a_cancelled_budget_stops_a_walk(workspace: Workspace) -> None:
    cancelled = budget()
    cancelled.cancelled.set()
    assert workspace.grep("x", "", budget=cancelled)["timed_out"] is True
    assert workspace.list_folder("", budget=cancelled)["timed_out"] is True
    with pytest.raises(ToolFailure) as caught:
        workspace.read_file("AGENTS.md", budget=cancelled)
    assert caught.value.code is ErrorCode.TIMEOUT


def test_missing_workspace_folder_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(ToolFailure) as caught:
        Workspace(tmp_path / "nope").list_folder("", budget=budget())
    assert caught.value.code is ErrorCode.NOT_FOUND
