"""The owner commands: init, validate and whitelist check, through the real entry point."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.cli import main

SECRET = "sk-never-print-0123456789"


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "240")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_init_then_nothing_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "init", str(tmp_path / "cfg"))
    assert code == 0 and "created" in out and (tmp_path / "cfg" / "whitelist.yml").is_file()
    code, out = run(capsys, "init", str(tmp_path / "cfg"))
    assert code == 0 and "nothing to do" in out


def test_validate_fresh_folder_passes_with_a_warning(
    config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "validate", "--config", str(config_dir))
    assert code == 0
    assert "valid: 0 error(s), 1 warning(s)" in out
    assert "OPENAI_API_KEY" in out


def test_validate_lists_every_error_with_its_line(
    config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (config_dir / "config.yml").write_text("schema: 1\nturn:\n  max_tool_rounds: 0\n")
    (config_dir / "whitelist.yml").write_text("schema: 1\nconsole:\n  - a\n  - a\n")
    code, out = run(capsys, "validate", "--config", str(config_dir))
    assert code == 1
    assert "invalid: 2 error(s)" in out
    assert "line 3:3, turn.max_tool_rounds" in out
    assert "rule [1] repeats rule [0]" in out


def test_validate_never_prints_secrets(
    config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (config_dir / ".env").write_text(f"OPENAI_API_KEY={SECRET}\nHDR='{SECRET}x\\n'\n")
    text = (config_dir / "providers.yml").read_text()
    text = text.replace(
        "    # extra_headers:\n", "    extra_headers:\n      X-A: ${HDR}\n      Host: h\n"
    )
    (config_dir / "providers.yml").write_text(text)
    code, out = run(capsys, "validate", "--config", str(config_dir))
    assert code == 1
    assert "Host" in out
    assert SECRET not in out


def test_validate_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "validate", "--config", str(tmp_path / "nope"))
    assert code == 2 and "does not exist" in out


class TestWhitelistCheck:
    @pytest.fixture
    def rules(self, config_dir: Path) -> Path:
        (config_dir / "whitelist.yml").write_text(
            "schema: 1\nplayer: ['time set (day|night)']\nconsole: ['weather clear']\n"
        )
        return config_dir

    def test_allow(self, rules: Path, capsys: pytest.CaptureFixture[str]) -> None:
        code, out = run(
            capsys, "whitelist", "check", "--config", str(rules), "--as", "player", "/TIME set day"
        )
        assert code == 0
        assert (
            "allow" in out
            and "canonical: time set day" in out
            and "rule: time set (day|night)" in out
        )

    def test_deny(self, rules: Path, capsys: pytest.CaptureFixture[str]) -> None:
        code, out = run(
            capsys, "whitelist", "check", "--config", str(rules), "--as", "console", "time set day"
        )
        assert code == 1
        assert "deny" in out and "none of the 1 rules matched" in out

    def test_invalid_command(self, rules: Path, capsys: pytest.CaptureFixture[str]) -> None:
        code, out = run(
            capsys, "whitelist", "check", "--config", str(rules), "--as", "player", "time  set day"
        )
        assert code == 2 and "repeated spaces" in out

    def test_broken_whitelist(self, config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
        (config_dir / "whitelist.yml").write_text("schema: 1\nplayer: ['(x']\n")
        code, out = run(
            capsys, "whitelist", "check", "--config", str(config_dir), "--as", "player", "x"
        )
        assert code == 1 and "whitelist.yml:2" in out

    def test_the_never_list_is_shown_with_what_it_carries_and_why(
        self, config_dir: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        (config_dir / "whitelist.yml").write_text(
            "schema: 1\nconsole:\n  - {rule: 'execute as @a run .*', allow_never: true}\n"
        )
        code, out = run(
            capsys, "whitelist", "check", "--config", str(config_dir), "--as", "console",
            "execute as @a run esudo Alex op Steve",
        )  # fmt: skip
        # The rule opts out, so the never entries are shown as passed; offline, nothing resolved.
        assert code == 0, out
        assert "carries: esudo Alex op Steve" in out and "rule: execute as @a run .*" in out
        assert "esudo" in out and "run_as_others" in out and "allow_never" in out
        assert "not resolved" in out

    def test_a_command_for_another_player_is_judged_by_the_never_list(
        self, rules: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        command = 'data merge block 1 2 3 {Command:"minecraft:op Steve"}'
        code, out = run(
            capsys, "whitelist", "check", "--config", str(rules), "--as", "other", command
        )
        assert code == 1 and "deny" in out and "operators" in out
        code, out = run(
            capsys, "whitelist", "check", "--config", str(rules), "--as", "other", "say hi"
        )
        assert code == 0 and "ask the player" in out and "not resolved" in out

    def test_a_rule_reaching_a_never_listed_command_is_reported(
        self, config_dir: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        (config_dir / "whitelist.yml").write_text("schema: 1\nconsole: ['weather clear', '.*']\n")
        code, out = run(
            capsys, "whitelist", "check", "--config", str(config_dir), "--as", "console", "list"
        )
        assert code == 1 and "whitelist.yml:2" in out and "allow_never" in out
        code, out = run(capsys, "validate", "--config", str(config_dir))
        assert code == 1 and "could match a never-listed command" in out

    def test_executor_is_required(self, rules: Path, capsys: pytest.CaptureFixture[str]) -> None:
        with pytest.raises(SystemExit) as caught:
            main(["whitelist", "check", "--config", str(rules), "list"])
        assert caught.value.code == 2
        capsys.readouterr()


def test_validate_lists_the_budget_tiers_with_their_nodes_and_limits(
    config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (config_dir / "config.yml").write_text(
        "schema: 1\nbudgets:\n  enabled: true\n  timezone: Europe/Berlin\n"
        "  server: {month_tokens: 9000000}\n  guest: {allow_tools: [run_command]}\n"
        "  tiers:\n    vip: {day_tokens: 200000}\n    member: {day_tokens: 50000}\n"
    )
    code, out = run(capsys, "validate", "--config", str(config_dir))
    assert code == 0
    assert "Token budgets (on; days and months in Europe/Berlin)" in out
    rows = [line for line in out.splitlines() if line.startswith("│")]
    vip = next(row for row in rows if "mineclaw.budget.vip" in row)
    assert "200,000" in vip and "checked first" in vip
    assert "50,000" in next(row for row in rows if "mineclaw.budget.member" in row)
    assert "9,000,000" in next(row for row in rows if row.startswith("│ server"))
    assert any("guest" in row and "run_command" in row for row in rows)


def test_validate_names_a_bad_time_zone(
    config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (config_dir / "config.yml").write_text("schema: 1\nbudgets:\n  timezone: Mars/Base\n")
    code, out = run(capsys, "validate", "--config", str(config_dir))
    assert code == 1
    assert "budgets.timezone" in out and "not a time zone name" in out
