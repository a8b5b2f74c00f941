"""The .env file: a small, regular, UTF-8 file of NAME=value lines, values never echoed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bridge.control import init_config_dir, load_control_plane
from bridge.control.envfile import parse_env, read_env_file
from bridge.control.problems import ConfigLoadError
from bridge.redaction import is_secret_name

from .conftest import Cli


def test_syntax() -> None:
    text = (
        "# comment\n"
        "\n"
        "PLAIN=value\n"
        "export EXPORTED=exp\n"
        "SPACED = padded  \n"
        "TRAILING=abc # comment\n"
        "HASH=abc#not-a-comment\n"
        "SINGLE='it ${X} stays \\n literal'\n"
        'DOUBLE="line\\nnext \\"q\\" $OTHER"\n'
        "EMPTY=\n"
        "QUOTED_COMMENT='v' # after\n"
    )
    assert parse_env(text.encode()) == {
        "PLAIN": "value",
        "EXPORTED": "exp",
        "SPACED": "padded",
        "TRAILING": "abc",
        "HASH": "abc#not-a-comment",
        "SINGLE": "it ${X} stays \\n literal",
        "DOUBLE": 'line\nnext "q" $OTHER',
        "EMPTY": "",
        "QUOTED_COMMENT": "v",
    }


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("A=1\nnot a line\n", 2, "expected NAME=value"),
        ("A='sk-open\n", 1, "unterminated single quote"),
        ('A="sk-open\n', 1, "unterminated double quote"),
        ("A='v' trailing-sk\n", 1, "after the closing quote"),
        ('A="\\q"\n', 1, "unknown escape"),
        ("A=sk'x\n", 1, "quotes inside"),
        ("A=1\nA=2\n", 2, "more than once"),
        ("1A=x\n", 1, "expected NAME=value"),
    ],
)
def test_bad_lines_are_located_and_not_echoed(text: str, line: int, message: str) -> None:
    with pytest.raises(ConfigLoadError) as caught:
        parse_env(text.encode())
    problem = caught.value.problems[0]
    assert (problem.file, problem.line) == (".env", line)
    assert message in problem.message
    assert "sk" not in str(caught.value)


def test_every_bad_line_reported() -> None:
    with pytest.raises(ConfigLoadError) as caught:
        parse_env(b"bad one\nOK=1\nbad two\n")
    assert [p.line for p in caught.value.problems] == [1, 3]


def test_not_utf8() -> None:
    with pytest.raises(ConfigLoadError, match="not valid UTF-8"):
        parse_env(b"A=\xff\n")


def test_missing_file_is_empty(tmp_path: Path) -> None:
    assert read_env_file(tmp_path) == {}


def test_symlink_refused(tmp_path: Path) -> None:
    (tmp_path / "real").write_text("A=1\n")
    (tmp_path / ".env").symlink_to(tmp_path / "real")
    with pytest.raises(ConfigLoadError, match="symbolic link"):
        read_env_file(tmp_path)


def test_directory_refused(tmp_path: Path) -> None:
    (tmp_path / ".env").mkdir()
    with pytest.raises(ConfigLoadError, match="not a regular file"):
        read_env_file(tmp_path)


def test_fifo_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".env")
    with pytest.raises(ConfigLoadError, match="not a regular file"):
        read_env_file(tmp_path)


def test_over_64_kib_refused(tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes(b"A=" + b"x" * (64 * 1024) + b"\n")
    with pytest.raises(ConfigLoadError, match="over 65536 bytes"):
        read_env_file(tmp_path)


@pytest.mark.parametrize(
    "name",
    [
        "DB_PASS",
        "SMTP_PASS",
        "MAIL_PW",
        "MYSQL_PWD",
        "ADMIN_PASSPHRASE",
        "RCON_PASSWORD",
        "GITHUB_APITOKEN",
        "AWS_SECRETKEY",
        "DISCORD_WEBHOOK_URL",
        "SENTRY_DSN",
        "DATABASE_URL",
    ],
)
def test_common_credential_spellings_are_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["SERVER_PORT", "PASSES", "BYPASS_MODE", "INPUT_TOKENS", "PWM"])
def test_plain_names_stay_plain(name: str) -> None:
    assert not is_secret_name(name)


def test_validate_lists_which_env_names_are_secrets(tmp_path: Path, cli: Cli) -> None:
    config = tmp_path / "config"
    init_config_dir(config)
    env = config / ".env"
    env.write_text("DB_PASS=hunter2hunter2\nSMTP_PW=abcdefgh\nSERVER_PORT=25565\n")
    env.chmod(0o600)
    code, out = cli("validate", "--config", str(config))
    assert code == 0, out
    secrets = next(line for line in out.splitlines() if line.startswith(".env secrets"))
    assert "DB_PASS" in secrets and "SMTP_PW" in secrets and "SERVER_PORT" not in secrets
    plain = next(line for line in out.splitlines() if line.startswith(".env names not"))
    assert "SERVER_PORT" in plain
    plane = load_control_plane(config)
    assert "hunter2hunter2" not in plane.redact("the password is hunter2hunter2")
