"""Review as a state (``functions.require_review``): an unreviewed source is not offered to the
model and its calls are refused; `mineclaw-bridge functions review` records the review (with
the diff against the last reviewed source, audited); a changed file needs a review again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bridge.app.wiring.runtime import Runtime
from bridge.cli import main
from bridge.control import init_config_dir
from bridge.store.reviews import FunctionReviews
from bridge.store.target import StorageTarget
from bridge.tools.registry import CallContext

from .test_live_tool import FUNCTIONS_YML

CONTEXT = CallContext(turn_id="t-1", call_id="c-1", player_uuid=None, player_name="Steve")
WAIT_S = 60


def _folder(tmp_path: Path, *, require_review: bool) -> Path:
    init_config_dir(tmp_path)
    (tmp_path / "functions.yml").write_text(FUNCTIONS_YML, encoding="utf-8")
    config = tmp_path / "config.yml"
    text = config.read_text(encoding="utf-8")
    flag = "true" if require_review else "false"
    config.write_text(text.replace("require_review: false", f"require_review: {flag}"), "utf-8")
    return tmp_path


def _offered(runtime: Runtime) -> str:
    specs = runtime.served.registry.for_player(()).specs
    spec = next((s for s in specs if s.name == "call_function"), None)
    return "" if spec is None else spec.description


def _review(capsys: pytest.CaptureFixture[str], folder: Path, *extra: str) -> tuple[int, str]:
    code = main(["functions", "review", "say-hello", "--config", str(folder), *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


async def test_an_unreviewed_function_is_neither_offered_nor_called(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path, require_review=True)
    runtime = Runtime.open(folder)
    try:
        assert "say-hello" not in _offered(runtime)
        refused = await asyncio.wait_for(
            runtime.functions.call_function(
                {"name": "say-hello", "arguments": {"to": "Alex"}}, CONTEXT
            ),
            WAIT_S,
        )
        assert refused["output"]["error_code"] == "function_unreviewed"

        code, out = _review(capsys, folder, "--yes", "--as", "owner-ann")
        assert code == 0, out
        assert "+async function onCall(ctx, api) {" in out  # the whole source is new
        await asyncio.to_thread(runtime.reload)  # the command line's review is read on reload
        assert "- say-hello: Say hello on the console." in _offered(runtime)

        # The owner edits the file: the new hash has no review, so it is not offered again.
        functions = folder / "functions.yml"
        functions.write_text(functions.read_text("utf-8").replace("say hello ", "say hi "), "utf-8")
        await asyncio.to_thread(runtime.reload)
        assert "say-hello" not in _offered(runtime)
        code, out = _review(capsys, folder, "--yes")
        assert code == 0, out
        changed = [line for line in out.splitlines() if line[:1] in "+-" and "command:" in line]
        assert [line[0] for line in changed] == ["-", "+"]
        assert "say hello " in changed[0] and "say hi " in changed[1]
        await asyncio.to_thread(runtime.reload)
        assert "say-hello" in _offered(runtime)
    finally:
        await asyncio.wait_for(runtime.aclose(), WAIT_S)
    audit = StorageTarget(folder / "data").open_audit()
    try:
        reviewed = audit.events("function.reviewed")
    finally:
        audit.close()
    assert [e.fields["reviewer"] for e in reviewed][0] == "owner-ann"
    assert reviewed[1].fields["previous_sha256"] == reviewed[0].fields["source_sha256"]
    assert all(e.fields["via"] == "cli" for e in reviewed)


async def test_without_require_review_an_enabled_function_is_offered(tmp_path: Path) -> None:
    runtime = Runtime.open(_folder(tmp_path, require_review=False))
    try:
        assert "- say-hello:" in _offered(runtime)
    finally:
        await asyncio.wait_for(runtime.aclose(), WAIT_S)


def test_review_without_a_terminal_needs_yes_and_records_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _folder(tmp_path, require_review=True)
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    code, out = _review(capsys, folder)
    assert code == 1 and "pass --yes" in out
    with FunctionReviews(folder / "data" / "archive.sqlite3") as reviews:
        assert reviews.reviewed() == frozenset()


def test_review_of_an_unknown_function_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path, require_review=True)
    code = main(["functions", "review", "nope", "--yes", "--config", str(folder)])
    assert code == 2
    assert "no Function named 'nope'" in capsys.readouterr().err
