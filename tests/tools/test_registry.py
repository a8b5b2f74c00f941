"""Registry: only built-in handlers exist, bad entries are isolated, gated tools are invisible."""

from __future__ import annotations

from typing import Any

import pytest

from bridge.control.layout import default_bytes
from bridge.control.tools_file import ToolsFile
from bridge.control.yaml_strict import load_strict_yaml
from bridge.tools.registry import CallContext, RegistryError, ToolRegistry


async def _fake(arguments: dict[str, Any], context: CallContext) -> Any:
    return {"echo": arguments}


HANDLERS = {name: _fake for name in ("list", "read", "grep", "run_command", "player_snapshot")}

TOOLS_YML = """\
schema: 1
tools:
  list:
    handler: list
    description: List files.
    parameters: {type: object, properties: {path: {type: string}}, additionalProperties: false}
  files:
    handler: read
    description: Read a file, under another name.
    parameters: {type: object, properties: {path: {type: string}}, required: [path]}
  run_command:
    handler: run_command
    description: Run a command.
    permission: mineclaw.tool.run_command
    parameters: {type: object}
  grep:
    handler: grep
    enabled: false
    description: Search.
    parameters: {type: object}
  shell:
    handler: shell
    description: YAML trying to add a handler.
    parameters: {type: object}
  broken_schema:
    handler: list
    description: The schema is not an object schema.
    parameters: {type: string}
  extra_field:
    handler: list
    description: Unknown key.
    parameters: {type: object}
    run_as: console
  snapshot:
    handler: player_snapshot
    description: Look at the player.
    parameters: {type: object}
  Bad-Name:
    handler: list
    description: Name out of pattern.
    parameters: {type: object}
  online:
    handler: online_players
    description: Not bound in this process.
    parameters: {type: object}
"""


def _registry(text: str = TOOLS_YML) -> ToolRegistry:
    document = load_strict_yaml(text.encode(), "tools.yml")
    registry, file_problems = ToolRegistry.from_document(document, HANDLERS)
    assert file_problems == ()
    return registry


def test_catalogue_gives_every_entry_a_status() -> None:
    statuses = {entry.name: entry.status for entry in _registry().catalogue}
    assert statuses == {
        "list": "available",
        "files": "available",
        "run_command": "available",
        "grep": "disabled",
        "shell": "invalid",
        "broken_schema": "invalid",
        "extra_field": "invalid",
        "snapshot": "available",
        "Bad-Name": "invalid",
        "online": "not_built",
    }


def test_invalid_entries_carry_located_problems() -> None:
    problems = {entry.name: entry.problems for entry in _registry().catalogue}
    (shell,) = problems["shell"]
    assert shell.message == "not a built-in handler; tools.yml cannot add one"
    lines = TOOLS_YML.splitlines()
    shell_line = lines.index("    handler: shell") + 1
    assert (shell.file, shell.line, shell.path) == ("tools.yml", shell_line, "tools.shell.handler")
    (extra,) = problems["extra_field"]
    assert (extra.path, extra.message) == ("tools.extra_field.run_as", "unknown field")
    assert extra.line == lines.index("    run_as: console") + 1
    assert 'must have "type": "object"' in problems["broken_schema"][0].message
    assert "must match" in problems["Bad-Name"][0].message


def test_yaml_cannot_add_a_handler_whatever_the_spelling() -> None:
    for handler in ("shell", "List", "read ", "call_function2", "__import__"):
        text = f"schema: 1\ntools:\n  t:\n    handler: {handler!r}\n    description: x\n"
        text += "    parameters: {type: object}\n"
        (entry,) = _registry(text).catalogue
        assert entry.status == "invalid", handler
        assert _registry(text).for_player({"x"}).tools == {}


def test_a_player_without_the_permission_never_sees_the_tool() -> None:
    registry = _registry()
    plain = registry.for_player(frozenset())
    names = [spec.name for spec in plain.specs]
    assert names == ["list", "files", "snapshot"]
    assert set(plain.tools) == set(names)
    trusted = registry.for_player({"mineclaw.tool.run_command"})
    assert [spec.name for spec in trusted.specs] == ["list", "files", "run_command", "snapshot"]


def test_specs_show_the_owner_name_description_and_schema() -> None:
    spec = next(s for s in _registry().for_player(()).specs if s.name == "files")
    assert spec.description == "Read a file, under another name."
    assert spec.parameters["required"] == ["path"]


def test_code_cannot_bind_a_handler_that_is_not_built_in() -> None:
    with pytest.raises(RegistryError, match="shell"):
        ToolRegistry.from_tools_file(ToolsFile.model_validate({"schema": 1}), {"shell": _fake})


def test_the_shipped_tools_yml_is_valid_and_gates_run_command() -> None:
    document = load_strict_yaml(default_bytes("tools.yml"), "tools.yml")
    registry, problems = ToolRegistry.from_document(document, HANDLERS)
    assert problems == ()
    assert all(entry.status != "invalid" for entry in registry.catalogue)
    assert "run_command" not in registry.for_player(()).tools
    assert "run_command" in registry.for_player({"mineclaw.tool.run_command"}).tools


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a list\n", "not a mapping"),
        ("schema: 2\ntools: {}\n", "must be 1"),
        ("schema: 1\ntools: [a]\n", "must be a mapping"),
        ("schema: 1\ntools: {}\nextra: 1\n", "unknown field"),
    ],
)
def test_whole_file_problems_are_reported(text: str, message: str) -> None:
    document = load_strict_yaml(text.encode(), "tools.yml")
    _, problems = ToolRegistry.from_document(document, HANDLERS)
    assert any(message in problem.message for problem in problems)
