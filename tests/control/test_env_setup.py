"""`.env` as a new owner meets it: the placeholder `init` writes, and a warning when other users
can read the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.control import ConfigLoadError, load_control_plane
from bridge.control.envfile import parse_env

KEY = "sk-test-0123456789abcdef"


def _problems(config_dir: Path) -> list[str]:
    try:
        plane = load_control_plane(config_dir, environ={})
    except ConfigLoadError as exc:
        return [str(p) for p in exc.problems]
    return [str(p) for p in plane.warnings]


def test_init_writes_a_commented_placeholder(config_dir: Path) -> None:
    lines = (config_dir / ".env").read_text().splitlines()
    assert "# OPENAI_API_KEY=" in lines
    assert not any(line.startswith("OPENAI_API_KEY") for line in lines)


def test_appending_the_key_to_the_generated_file_just_works(config_dir: Path) -> None:
    with (config_dir / ".env").open("a") as env:
        env.write(f"OPENAI_API_KEY={KEY}\n")
    plane = load_control_plane(config_dir, environ={})
    assert plane.providers.providers["openai"].api_key.get_secret_value() == KEY
    assert not any("OPENAI_API_KEY" in str(p) for p in plane.warnings)


def test_editing_the_placeholder_just_works(config_dir: Path) -> None:
    env = config_dir / ".env"
    env.write_text(env.read_text().replace("# OPENAI_API_KEY=", f"OPENAI_API_KEY={KEY}"))
    plane = load_control_plane(config_dir, environ={})
    assert plane.providers.providers["openai"].api_key.get_secret_value() == KEY


def test_a_key_appended_below_an_empty_placeholder_fills_it() -> None:
    # Files written by the older `init` hold `OPENAI_API_KEY=`; appending used to be refused.
    assert parse_env(f"OPENAI_API_KEY=\nOPENAI_API_KEY={KEY}\n".encode()) == {"OPENAI_API_KEY": KEY}


def test_two_values_for_one_name_are_still_refused() -> None:
    with pytest.raises(ConfigLoadError) as caught:
        parse_env(b"A=one1\nA=two2\n")
    [problem] = caught.value.problems
    assert problem.line == 2 and "line 1 also sets it" in problem.message
    assert "one1" not in str(problem) and "two2" not in str(problem)


@pytest.mark.parametrize(("mode", "warned"), [(0o600, False), (0o640, True), (0o644, True)])
def test_an_env_file_other_users_can_read_is_warned_about(
    config_dir: Path, mode: int, warned: bool
) -> None:
    (config_dir / ".env").chmod(mode)
    found = [p for p in _problems(config_dir) if p.startswith(".env")]
    if warned:
        assert len(found) == 1 and "readable by other users" in found[0], found
        assert "chmod 600" in found[0] and f"{mode:o}" in found[0]
    else:
        assert found == []
