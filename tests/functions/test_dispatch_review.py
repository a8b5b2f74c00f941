"""``functions validate`` flags Functions whose console commands are built at run time."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.control.functions_file import FunctionsFile
from bridge.functions.dispatch_review import built_console_commands

from .support import body, function
from .test_cli import GIVE, cli, config, write_functions  # noqa: F401 (config is a fixture)

DISPATCH = "const r = await api.invoke({action: 'command.dispatch', input: {executor: 'console', "

BUILT = [
    DISPATCH + "command: `give ${ctx.player.name} bread ${ctx.args.count}`}});",
    DISPATCH + "command: 'give ' + ctx.args.player + ' bread'}});",
    DISPATCH + "command: ctx.args.command}});",
    DISPATCH + "command: build(ctx.args)}});",
    DISPATCH + '"command": "time set " + ctx.args.when}});',
    DISPATCH + "command:\n  `say ${ctx.args.text}`}});",
    "const input = {executor: 'console'}; input['comm' + 'and'] = ctx.args.c;"
    " await api.invoke({action: 'command.dispatch', input});",
]
FIXED = [
    DISPATCH + "command: 'time set day'}});",
    DISPATCH + 'command: "weather clear"});',
    DISPATCH + "command: `say the server restarts soon`}});",
]


def _catalogue(source: str, capability: str = "command.dispatch.console") -> FunctionsFile:
    spec = function(body(source + " return {status: 'ok', output: {}};"), capabilities=[capability])
    return FunctionsFile.model_validate({"schema": 1, "api_version": 1, "functions": [spec]})


@pytest.mark.parametrize("source", BUILT)
def test_a_console_command_built_at_run_time_is_flagged(source: str) -> None:
    [flag] = built_console_commands(_catalogue(source))
    assert flag.index == 0 and "never list" in flag.message()


@pytest.mark.parametrize("source", FIXED)
def test_a_fixed_console_command_is_not_flagged(source: str) -> None:
    assert built_console_commands(_catalogue(source)) == []


def test_only_console_dispatch_is_flagged() -> None:
    player = _catalogue(BUILT[0], capability="command.dispatch.player")
    assert built_console_commands(player) == []


def test_functions_validate_prints_the_flag_as_a_warning(
    config: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_functions(config, GIVE)
    code, out = cli(capsys, "functions", "validate", "--config", str(config))
    assert "warning" in out and "starter-kit" in out and "ctx.args" in out
    assert code == 0, out  # a warning, not an error
