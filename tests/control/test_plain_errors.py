"""Control-plane errors in an owner's words: a hint, the bad value, the nearest known key, every
problem of a file at once; and one exit-code rule for every command (README, "Exit codes")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bridge.control import ConfigLoadError, load_control_plane

from .conftest import Cli

REPO = Path(__file__).resolve().parents[2]


def problems_of(config_dir: Path, name: str, text: str) -> list[str]:
    (config_dir / name).write_text(text)
    with pytest.raises(ConfigLoadError) as caught:
        load_control_plane(config_dir, environ={})
    return [str(p) for p in caught.value.problems if p.file == name and not p.warning]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("schema: 1\nlink:\n\tport: 5\n", 3, ["tab character", "spaces"]),
        ("schema: 1\nlink:\n  port: 5\n   host: x\n", 4, ["indented", "quotes"]),
        ("schema: 1\nlink:\n    port: 5\n  host: x\n", 4, ["not indented like the keys"]),
        (
            'schema: 1\nchat:\n  wake_pattern: "^\\d+ ai"\n',
            3,
            ["unknown escape \\d", "single quotes", "twice"],
        ),
        ("schema: 1\nidentity:\n  name: %NAME%\n", 3, ["cannot start with '%'", "quotes"]),
        ('schema: 1\nidentity:\n  name: "open\n', 3, ["close the quote"]),
    ],
)
def test_yaml_syntax_errors_are_explained_with_a_hint(
    config_dir: Path, text: str, line: int, words: list[str]
) -> None:
    found = problems_of(config_dir, "config.yml", text)
    assert len(found) == 1, found
    assert found[0].startswith(f"config.yml:{line}:"), found
    for word in words:
        assert word in found[0], found
    for parser_words in ("cannot start any token", "not allowed in this context", "found unknown"):
        assert parser_words not in found[0]


def test_a_type_error_shows_the_bad_value(config_dir: Path) -> None:
    found = problems_of(config_dir, "config.yml", "schema: 1\nlink:\n  port: seventy\n")
    assert found == ["config.yml:3:3: link.port: expected a whole number, got 'seventy'"]
    found = problems_of(config_dir, "config.yml", "schema: 1\nturn:\n  max_tool_rounds: 0\n")
    assert found == ["config.yml:3:3: turn.max_tool_rounds: must be at least 1, got 0"]


def test_a_value_that_may_be_a_secret_is_never_shown(config_dir: Path) -> None:
    text = (config_dir / "providers.yml").read_text()
    found = problems_of(
        config_dir, "providers.yml", text.replace("${OPENAI_API_KEY}", "987654321987")
    )
    assert found and all("987654321987" not in line for line in found), found


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("config.yml", "schema: 1\nturn:\n  max_tol_calls: 3\n", "did you mean 'max_tool_calls'?"),
        ("config.yml", "schema: 1\nratelimits: {}\n", "did you mean 'rate_limits'?"),
        ("config.yml", "schema: 1\nlink:\n  hots: x\n", "did you mean 'host'?"),
        ("message.yml", "schema: 1\ngates:\n  bsy: x\n", "did you mean 'busy'?"),
    ],
)
def test_an_unknown_key_names_the_nearest_known_key(
    config_dir: Path, name: str, text: str, expected: str
) -> None:
    found = problems_of(config_dir, name, text)
    assert len(found) == 1 and "unknown field" in found[0] and expected in found[0], found


def test_every_problem_of_a_file_is_listed(config_dir: Path) -> None:
    text = (
        "schema: 1\n"
        "identity:\n  include_player_name_field: yes\n"
        "  include_player_content_prefix: off\n"
        "turn:\n  max_tool_rounds: 2\n  max_tool_rounds: 3\n"
    )
    found = problems_of(config_dir, "config.yml", text)
    assert len(found) == 3, found
    assert "YAML 1.1 boolean" in found[0] and "YAML 1.1 boolean" in found[1]
    assert "duplicate key 'max_tool_rounds'" in found[2]


def test_the_readme_states_the_exit_code_rule() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| ([0-2]) \| (.+) \|$", section, re.MULTILINE))
    assert set(rows) == {"0", "1", "2"}, section
    assert "problems" in rows["1"] and "could not run" in rows["2"]


def test_every_command_follows_the_exit_code_rule(
    config_dir: Path, tmp_path: Path, cli: Cli
) -> None:
    cfg = str(config_dir)
    missing = str(tmp_path / "missing")
    # 0: done, nothing wrong.
    assert cli("validate", "--config", cfg)[0] == 0
    assert cli("tools", "validate", "--config", cfg)[0] == 0
    assert cli("functions", "validate", "--config", cfg)[0] == 0
    # 2: could not run as asked.
    for argv in (
        ("validate",),
        ("tools", "validate"),
        ("functions", "validate"),
        ("tools", "call", "read"),
        ("functions", "run", "starter-kit", "--as", "Steve"),
        ("whitelist", "check", "--as", "player", "list"),
        ("provider", "test", "hello"),
    ):
        assert cli(*argv, "--config", missing)[0] == 2, argv
    assert cli("tools", "call", "nosuchtool", "--config", cfg)[0] == 2
    assert cli("tools", "call", "run_command", "--config", cfg)[0] == 2
    bad_args = ("functions", "run", "starter-kit", "--args", "{", "--as", "S")
    assert cli(*bad_args, "--config", cfg)[0] == 2
    # 1: ran and found problems.
    (config_dir / "whitelist.yml").write_text("schema: 1\nplayer: ['(x']\n")
    assert cli("whitelist", "check", "--as", "player", "x", "--config", cfg)[0] == 1
    assert cli("validate", "--config", cfg)[0] == 1
    (config_dir / "functions.yml").write_text("schema: 1\napi_version: 1\nfunctions: 3\n")
    assert cli("functions", "run", "starter-kit", "--as", "Steve", "--config", cfg)[0] == 1
    assert cli("functions", "validate", "--config", cfg)[0] == 1
