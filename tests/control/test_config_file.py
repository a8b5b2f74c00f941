"""config.yml and whitelist.yml ranges, through the same path the loader uses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bridge.control import ConfigLoadError, load_control_plane
from bridge.control.config_file import ConfigFile
from bridge.control.validation import validate_document
from bridge.control.whitelist_file import WhitelistFile
from bridge.control.yaml_strict import YamlDocument, load_strict_yaml


def problems(model: Any, text: str) -> list[str]:
    document = load_strict_yaml(text.encode(), "x.yml")
    parsed, found = validate_document(model, document, "x.yml")
    assert (parsed is None) == bool(found)
    return [f"{p.line}:{p.path}: {p.message}" for p in found]


def test_empty_schema_only_file_is_complete() -> None:
    assert problems(ConfigFile, "schema: 1\n") == []


@pytest.mark.parametrize(
    ("section", "field", "good", "bad"),
    [
        ("environment", "look_distance", [1, 128], [0, 129]),
        ("chat", "reply_max_chars", [16, 16384], [15, 16385]),
        ("rate_limits", "player_cooldown_ms", [0, 3_600_000], [-1, 3_600_001]),
        ("turn", "max_tool_rounds", [1, 64], [0, 65]),
        ("turn", "max_tool_calls", [1, 256], [0, 257]),
        ("context", "max_messages", [2, 10000], [1, 10001]),
        ("workspace", "timeout_ms", [10, 60000], [9, 60001]),
        ("functions", "workflow_ms", [100, 3_600_000], [99, 3_600_001]),
        ("link", "port", [1, 65535], [0, 65536]),
        ("link", "max_frame_bytes", [1024, 16 * 1024 * 1024], [1023, 16 * 1024 * 1024 + 1]),
    ],
)
def test_ranges(section: str, field: str, good: list[int], bad: list[int]) -> None:
    for value in good:
        assert problems(ConfigFile, f"schema: 1\n{section}:\n  {field}: {value}\n") == []
    for value in bad:
        found = problems(ConfigFile, f"schema: 1\n{section}:\n  {field}: {value}\n")
        assert len(found) == 1 and found[0].startswith(f"3:{section}.{field}: ")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("chat:\n  public_prefix: 'hey ai'", "chat.public_prefix"),
        ("chat:\n  public_prefix: '§a@ai'", "chat.public_prefix"),
        ("chat:\n  wake_pattern: '(a)\\1'", "chat.wake_pattern"),
        ("identity:\n  name: 'Bot§c'", "identity.name"),
        ("identity:\n  include_player_name_field: 'true'", "identity.include_player_name_field"),
        ("logging:\n  level: TRACE", "logging.level"),
        ("link:\n  host: 'localhost/evil'", "link.host"),
        ("link:\n  port: 25580.0", "link.port"),
        ("functions:\n  heap_mb: '32'", "functions.heap_mb"),
        ("chat:\n  prefix: '@ai'", "chat.prefix"),
    ],
)
def test_refused_values(text: str, where: str) -> None:
    found = problems(ConfigFile, f"schema: 1\n{text}\n")
    assert len(found) == 1 and f":{where}: " in found[0]


def test_wrong_schema_version() -> None:
    assert problems(ConfigFile, "schema: 2\n") == ["1:schema: expected 1, got 2"]


def test_not_a_mapping() -> None:
    document = YamlDocument(value=["a"])
    parsed, found = validate_document(ConfigFile, document, "config.yml")
    assert parsed is None and "not a mapping" in found[0].message


class TestWhitelistFile:
    def test_rule_count_and_length(self) -> None:
        rules = "".join(f"  - 'r{i}'\n" for i in range(257))
        assert any("player" in p for p in problems(WhitelistFile, f"schema: 1\nplayer:\n{rules}"))
        long_rule = "x" * 513
        found = problems(WhitelistFile, f"schema: 1\nconsole:\n  - ok\n  - '{long_rule}'\n")
        assert found == ["4:console[1]: a rule must have 1 to 512 characters"]

    def test_invalid_pattern_is_located(self) -> None:
        found = problems(WhitelistFile, "schema: 1\nplayer:\n  - 'a'\n  - 'b(?=c)'\n")
        assert len(found) == 1 and found[0].startswith("4:player[1]: not a valid RE2 pattern")

    def test_enabled_must_be_a_real_boolean(self) -> None:
        with pytest.raises(ConfigLoadError, match="YAML 1.1 boolean"):
            load_strict_yaml(b"schema: 1\nenabled: yes\n", "whitelist.yml")


def test_oversized_control_file(config_dir: Path) -> None:
    (config_dir / "config.yml").write_bytes(b"schema: 1\n" + b"#" * (256 * 1024) + b"\n")
    with pytest.raises(ConfigLoadError) as caught:
        load_control_plane(config_dir, environ={})
    assert [(p.file, "over" in p.message) for p in caught.value.problems if not p.warning] == [
        ("config.yml", True)
    ]
