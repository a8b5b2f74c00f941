"""config.yml's mcp section: mistaken and hostile values are refused with the field named;
references are resolved from the environment and .env and nothing else."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from bridge.control.config_file import ConfigFile
from bridge.control.tools_file import ToolSpec


def _mcp(servers: dict[str, Any], environ: dict[str, str] | None = None) -> ConfigFile:
    return ConfigFile.model_validate(
        {"schema": 1, "mcp": {"enabled": True, "servers": servers}},
        context={"environ": environ or {}},
    )


STDIO = {"transport": "stdio", "command": "python3"}
HTTP = {"transport": "http", "url": "http://127.0.0.1:9000/mcp"}


def test_off_by_default() -> None:
    mcp = ConfigFile.model_validate({"schema": 1}).mcp
    assert mcp.enabled is False and mcp.servers == {}


@pytest.mark.parametrize(
    ("servers", "said"),
    [
        ({"Wiki": STDIO}, "server name 'Wiki'"),
        ({"wiki__x": STDIO}, "server name 'wiki__x'"),
        ({"a" * 25: STDIO}, "at most 24"),
        ({"wiki": {"transport": "stdio"}}, "needs command"),
        ({"wiki": {"transport": "http"}}, "needs url"),
        ({"wiki": {**STDIO, "url": "http://x/mcp"}}, "for transport http"),
        ({"wiki": {**HTTP, "command": "x"}}, "for transport stdio"),
        ({"wiki": {**HTTP, "url": "ftp://x"}}, "http:// or https://"),
        ({"wiki": {**STDIO, "cwd": "../outside"}}, "inside the workspace"),
        ({"wiki": {**STDIO, "cwd": "/etc"}}, "inside the workspace"),
        ({"wiki": {**STDIO, "env": ["NOT SET"]}}, "not an environment variable name"),
        ({"wiki": {**STDIO, "env": ["WIKI_TOKEN"]}}, "${WIKI_TOKEN} is not set"),
        ({"wiki": {**HTTP, "headers": {"X-Token": "${NOPE}"}}}, "${NOPE} is not set"),
        ({"wiki": {**HTTP, "headers": {"X-Token": "a\r\nInjected: 1"}}}, "on one line"),
        ({"wiki": {**HTTP, "headers": {"bad header": "x"}}}, "not an HTTP header name"),
        ({"wiki": {**STDIO, "call_timeout_ms": 10}}, "greater than or equal"),
        ({"wiki": {**STDIO, "permission": "Not A Node"}}, "permission node"),
        ({"wiki": {**STDIO, "tools": {"a b": {}}}}, "not an MCP tool name"),
        ({"wiki": {**STDIO, "tools": {"x": {"max_result_chars": 1}}}}, "greater than or equal"),
        ({"wiki": {**STDIO, "transport": "sse"}}, "transport"),
        ({"wiki": {**STDIO, "inherit_env": True}}, "Extra inputs"),
    ],
)
def test_a_bad_server_is_refused_naming_the_field(servers: dict[str, Any], said: str) -> None:
    with pytest.raises(ValidationError) as error:
        _mcp(servers)
    assert said in str(error.value), str(error.value)


def test_references_are_resolved_and_never_shown() -> None:
    environ = {"WIKI_TOKEN": "tok-0123456789", "OTHER": "x"}
    config = _mcp(
        {
            "wiki": {**STDIO, "env": ["WIKI_TOKEN"]},
            "shop": {**HTTP, "headers": {"Authorization": "Bearer ${WIKI_TOKEN}"}},
        },
        environ,
    ).mcp
    assert config.servers["wiki"].env_values == {"WIKI_TOKEN": "tok-0123456789"}
    assert config.servers["shop"].header_values == {"Authorization": "Bearer tok-0123456789"}
    assert "tok-0123456789" not in repr(config)


def test_a_tools_own_settings_fall_back_to_the_servers() -> None:
    server = _mcp(
        {
            "wiki": {
                **STDIO,
                "permission": "mineclaw.tool.wiki",
                "cost": "paid",
                "tools": {"search": {"max_result_chars": 500}},
            }
        }
    ).mcp.servers["wiki"]
    search = server.for_tool("search")
    assert (search.permission, search.cost, search.max_result_chars) == (
        "mineclaw.tool.wiki",
        "paid",
        500,
    )
    assert server.for_tool("other").max_result_chars == 8000


def test_tools_yml_cannot_name_the_mcp_handler() -> None:
    entry = {"handler": "mcp", "description": "x", "parameters": {"type": "object"}}
    with pytest.raises(ValidationError, match="MCP tools come from config.yml"):
        ToolSpec.model_validate(entry)
