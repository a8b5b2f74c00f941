"""What the control plane gives its redactor: every resolved secret value and the owner's
``redaction.rules``, validated like every other field."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.control import ConfigLoadError, load_control_plane


def write(directory: Path, name: str, text: str) -> None:
    (directory / name).write_text(text, encoding="utf-8")


def with_header(config_dir: Path, header: str) -> None:
    providers = config_dir / "providers.yml"
    text = providers.read_text().replace("    # extra_headers:\n", f"    extra_headers:\n{header}")
    write(config_dir, "providers.yml", text)


def test_each_reference_inside_a_header_template_is_redacted_alone(config_dir: Path) -> None:
    with_header(config_dir, '      X-Auth: "Bearer ${GATEWAY_TOKEN} org ${ORG_ID}"\n')
    token, org = "Gx7Qz2Wm9Lt4Rp8Nv3", "org-5521-east"
    plane = load_control_plane(config_dir, environ={"GATEWAY_TOKEN": token, "ORG_ID": org})
    for echoed in (f"unknown token {token}", f"{org} is over quota", f"Bearer {token} org {org}"):
        shown = plane.redact(echoed)
        assert token not in shown and org not in shown, shown
        assert "[redacted: " in shown


def test_env_values_with_secret_looking_names_are_redacted_and_plain_settings_are_not(
    config_dir: Path,
) -> None:
    write(
        config_dir,
        ".env",
        "RCON_PASSWORD=Wq3Zx8Lm2Kv\nDISCORD_BOT_TOKEN=Hd7Ks2Lq9Zm\nSTRIPE_API_KEY=plainish9\n"
        "SERVER_PORT=25565\nWORLD_NAME=survival\n",
    )
    plane = load_control_plane(config_dir, environ={})
    for secret in ("Wq3Zx8Lm2Kv", "Hd7Ks2Lq9Zm", "plainish9"):
        assert secret not in plane.redact(f"value {secret} here")
    assert plane.redact("port 25565 of world survival") == "port 25565 of world survival"


def test_the_provider_key_is_redacted_wherever_it_appears(config_dir: Path) -> None:
    write(config_dir, ".env", "OPENAI_API_KEY=Kx9Qw2Zr7Lp4Mv8N\n")
    plane = load_control_plane(config_dir, environ={})
    assert "Kx9Qw2Zr7Lp4Mv8N" not in plane.redact("the key Kx9Qw2Zr7Lp4Mv8N was refused")


def test_owner_rules_apply_with_the_built_in_ones(config_dir: Path) -> None:
    config = (config_dir / "config.yml").read_text()
    rules = (
        "\nredaction:\n  rules:\n"
        "    - kind: rcon password\n      pattern: 'rcon\\.password=(?P<secret>\\S+)'\n"
        "    - kind: coordinates\n      pattern: 'base at -?\\d+ -?\\d+ -?\\d+'\n"
    )
    write(config_dir, "config.yml", config + rules)
    plane = load_control_plane(config_dir, environ={})
    shown = plane.redact("rcon.password=minecraft1 and base at 120 64 -300, password: hunter22")
    assert shown == (
        "rcon.password=[redacted: rcon password] and [redacted: coordinates], "
        "password: [redacted: password]"
    )


@pytest.mark.parametrize(
    ("rule", "field", "words"),
    [
        ("- kind: broken\n      pattern: 'key=(\\S+'", "redaction.rules[0].pattern", "missing )"),
        ("- kind: Bad Kind!\n      pattern: x", "redaction.rules[0].kind", "lower-case"),
        ("- kind: big\n      pattern: 'a{1,5000}'", "redaction.rules[0].pattern", "repetition"),
        ("- kind: k\n      pattern: x\n      group: 1", "redaction.rules[0].group", "unknown"),
        ("- kind: k", "redaction.rules[0].pattern", "missing"),
    ],
)
def test_a_bad_rule_is_a_located_problem(
    config_dir: Path, rule: str, field: str, words: str
) -> None:
    config = (config_dir / "config.yml").read_text()
    write(config_dir, "config.yml", config + f"\nredaction:\n  rules:\n    {rule}\n")
    rule_line = config.count("\n") + 4
    with pytest.raises(ConfigLoadError) as caught:
        load_control_plane(config_dir, environ={})
    [problem] = [p for p in caught.value.problems if not p.warning]
    assert (problem.file, problem.path) == ("config.yml", field)
    assert problem.line is not None and rule_line <= problem.line <= rule_line + 2
    assert words in problem.message
