"""`mineclaw-bridge functions validate` and `functions run` on a real configuration folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from bridge.cli import main
from bridge.control import init_config_dir
from bridge.control.functions_file import FunctionsFile

from .support import body, function

GIVE = function(
    body("""
        const answer = await api.invoke({action: 'approval.request', input: {
            player: ctx.player.name, timeout_ms: 30000,
            interaction: {type: 'confirm', title: 'Kit', message: 'Take the starter kit?'}}});
        if (answer.approval_status !== 'approved') {
          return {status: 'declined', output: {approval_status: answer.approval_status}};
        }
        const look = await api.invoke({action: 'native_tool.call',
            input: {tool: 'player_snapshot', arguments: {}}});
        const done = await api.invoke({action: 'command.dispatch', input: {executor: 'console',
            command: 'give ' + ctx.player.name + ' bread ' + ctx.args.count}});
        return {status: 'ok', output: {dispatch_status: done.dispatch_status,
                                       look: look.operation_status}};
    """),
    name="starter-kit",
    capabilities=[
        "approval.request",
        "command.dispatch.console",
        "native_tool.call.player_snapshot",
    ],
    parameters={
        "type": "object",
        "properties": {"count": {"type": "integer", "minimum": 1, "maximum": 16}},
        "required": ["count"],
    },
)


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COLUMNS", "240")  # rich wraps tables to the terminal width
    path = tmp_path / "config"
    init_config_dir(path)
    write_functions(path, GIVE)
    return path


def write_functions(path: Path, *entries: dict[str, Any]) -> None:
    document = {"schema": 1, "api_version": 1, "functions": list(entries)}
    (path / "functions.yml").write_text(yaml.safe_dump(document, sort_keys=False))


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_validate_lists_status_and_full_hash(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = FunctionsFile.model_validate(yaml.safe_load((config / "functions.yml").read_text()))
    code, out = cli(capsys, "functions", "validate", "--config", str(config))
    assert code == 0, out
    assert "starter-kit" in out and "enabled" in out
    assert spec.functions[0].source_sha256 in out
    assert "valid: nothing executed" in out


def test_validate_reports_skills_naming_missing_functions(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skill = config / "workspace" / "skills" / "kits.md"
    skill.write_text(
        "---\nid: kits\nname: Kits\ndescription: Handing out kits.\n---\n"
        "Use function:starter-kit for new players and function:vip-kit for donors.\n"
        'Example: call_function {"name": "gold-kit", "arguments": {}}\n'
    )
    code, out = cli(capsys, "functions", "validate", "--config", str(config))
    assert code == 1
    # The file, the line and the field of each reference (the body starts on line 6).
    assert "workspace/skills/kits.md:6: body: names unknown Function 'vip-kit'" in out
    assert "workspace/skills/kits.md:7: body: names unknown Function 'gold-kit'" in out
    assert "'starter-kit'" not in out


def test_validate_reports_a_missing_function_named_in_a_skill_description(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skill = config / "workspace" / "skills" / "kits.md"
    skill.write_text(
        "---\nid: kits\nname: Kits\n# the description is what the model sees in the index\n"
        "description: Hands out function:gone-kit.\n---\nNothing here.\n"
    )
    code, out = cli(capsys, "functions", "validate", "--config", str(config))
    assert code == 1
    assert "workspace/skills/kits.md:5: description: names unknown Function 'gone-kit'" in out


def test_validate_names_the_line_of_a_bad_capability(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_functions(config, {**GIVE, "capabilities": ["native_tool.call.call_function"]})
    code, out = cli(capsys, "functions", "validate", "--config", str(config))
    assert code == 1
    assert "functions.yml:7:3: functions[0].capabilities" in out
    assert "may not call Functions" in out


def test_validate_flags_a_capability_for_an_unconfigured_tool(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_functions(config, {**GIVE, "capabilities": ["native_tool.call.teleport"]})
    code, out = cli(capsys, "functions", "validate", "--config", str(config))
    assert code == 1
    assert "no native tool 'teleport' is configured" in out


def test_validate_still_reviews_functions_when_another_file_is_broken(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (config / "message.yml").write_text("schema: 1\nunknown_field: 1\n")
    code, out = cli(capsys, "functions", "validate", "--config", str(config))
    assert "starter-kit" in out
    assert "problem(s) in other files" in out
    assert "native tool names not checked" in out
    assert code == 1  # the folder's one verdict: validate, serve and reload refuse it too


def test_run_records_everything_and_performs_nothing(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli(
        capsys, "functions", "run", "starter-kit", "--args", '{"count": 3}', "--as", "Steve",
        "--config", str(config),
    )  # fmt: skip
    assert code == 0, out
    assert "approval.request" in out
    assert "native_tool.call.player_snapshot" in out
    assert "command.dispatch.console" in out
    assert "give Steve bread 3" in out
    assert '"dispatch_status": "not_dispatched"' in out
    assert '"look": "not_performed"' in out


def test_run_answers_approvals_as_told(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for answer, expected in (("no", "denied"), ("timeout", "timeout")):
        code, out = cli(
            capsys, "functions", "run", "starter-kit", "--args", '{"count": 1}', "--as", "Steve",
            "--approve", answer, "--config", str(config),
        )  # fmt: skip
        assert code == 0, out
        assert f'"approval_status": "{expected}"' in out
        assert "command.dispatch" not in out


def test_run_refuses_bad_input(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["functions", "run", "starter-kit", "--config", str(config)]
    code, out = cli(capsys, *base, "--args", "{not json", "--as", "Steve")
    assert code == 2 and "--args is not JSON" in out
    code, out = cli(capsys, *base, "--args", "{}", "--as", "Steve; op")
    assert code == 2 and "--as must be a player name" in out
    code, out = cli(capsys, *base, "--args", '{"count": 99}', "--as", "Steve")
    assert code == 1 and "invalid_arguments" in out and "count" in out
    code, out = cli(capsys, "functions", "run", "nope", "--as", "Steve", "--config", str(config))
    assert code == 1 and "unknown_function" in out


def test_run_survives_a_v8_fatal_error_in_its_worker(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The dry run uses the same workers as the bridge: V8 aborting ends the worker, not the
    # command (in-process, this ended the whole Python process with exit 133).
    settings = yaml.safe_load((config / "config.yml").read_text())
    settings["functions"].update(sync_segment_ms=10_000, worker_memory_mb=4_096)
    (config / "config.yml").write_text(yaml.safe_dump(settings))
    # V8 refuses an array of 2**28 elements with a fatal error at once; the earlier crash (a
    # replace that grew to that size) ran for seconds first and met the segment limit under load.
    crash = "'a'.repeat(2 ** 28).split(''); return 1;"
    write_functions(config, function(body(crash), name="crash"))
    code, out = cli(capsys, "functions", "run", "crash", "--as", "Steve", "--config", str(config))
    assert code == 1, out
    assert "memory_limit" in out or "engine_crashed" in out, out
    assert "Fatal" in out, out
