"""An unset ``${NAME}`` in a field the bridge uses is an error naming file, line and the
variable it probably meant; where nothing uses the field (or no key was ever set: a fresh
folder) it is a warning, so the bridge still starts and says what fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.control import ConfigLoadError, load_control_plane
from bridge.control.secrets import similar_variable
from tests.control.conftest import Cli

KEY = "sk-a-real-looking-key-123456"


def _env(config_dir: Path, text: str) -> None:
    (config_dir / ".env").write_text(text)
    (config_dir / ".env").chmod(0o600)


def _misspell_key(config_dir: Path) -> None:
    providers = config_dir / "providers.yml"
    providers.write_text(providers.read_text().replace("${OPENAI_API_KEY}", "${OPENAI_APIKEY}"))
    _env(config_dir, f"OPENAI_API_KEY={KEY}\n")


def test_a_misspelt_key_of_the_default_model_is_an_error_with_the_name_meant(
    config_dir: Path,
) -> None:
    _misspell_key(config_dir)
    with pytest.raises(ConfigLoadError) as caught:
        load_control_plane(config_dir, environ={})
    (problem,) = [p for p in caught.value.problems if not p.warning]
    assert (problem.file, problem.path) == ("providers.yml", "providers.openai.api_key")
    lines = (config_dir / "providers.yml").read_text().splitlines()
    assert "${OPENAI_APIKEY}" in lines[problem.line - 1]
    assert "${OPENAI_APIKEY} is not set" in problem.message
    assert "did you mean ${OPENAI_API_KEY}?" in problem.message
    assert KEY not in str(caught.value)


def test_validate_says_invalid_and_names_the_fix(config_dir: Path, cli: Cli) -> None:
    _misspell_key(config_dir)
    code, out = cli("validate", "--config", str(config_dir))
    assert code == 1, out
    assert "did you mean ${OPENAI_API_KEY}?" in out and "invalid" in out
    assert KEY not in out


def test_a_misspelt_key_of_a_provider_nothing_uses_is_a_warning(config_dir: Path) -> None:
    providers = config_dir / "providers.yml"
    text = providers.read_text().replace(
        "\nmodels:\n",
        "  spare:\n    api:\n      type: openai_chat_completions\n"
        "      base_url: https://spare.example/v1\n    api_key: ${SPARE_KEYY}\n\nmodels:\n",
    )
    providers.write_text(text)
    _env(config_dir, f"OPENAI_API_KEY={KEY}\nSPARE_KEY={KEY}x\n")
    plane = load_control_plane(config_dir, environ={})
    (warning,) = [p for p in plane.warnings if p.path == "providers.spare.api_key"]
    assert "did you mean ${SPARE_KEY}?" in warning.message
    assert "no model in use" in warning.message


def test_a_fresh_folder_without_any_key_still_loads_with_a_warning(config_dir: Path) -> None:
    plane = load_control_plane(config_dir, environ={})
    (warning,) = [p for p in plane.warnings if p.path == "providers.openai.api_key"]
    assert (
        "${OPENAI_API_KEY} is not set" in warning.message and "did you mean" not in warning.message
    )


@pytest.mark.parametrize(
    ("file", "text", "meant"),
    [
        (
            "config.yml",
            "schema: 1\nstorage:\n  backend: postgresql\n  dsn: postgresql://u@h/db\n"
            "  password: ${MINECLAW_DB_PASWORD}\n",
            "MINECLAW_DB_PASSWORD",
        ),
        (
            "servers.yml",
            "schema: 1\nservers:\n  lobby:\n    token: ${LOBBY_TOKEN}\n",
            "LOBBY_LINK_TOKEN",
        ),
    ],
)
def test_other_references_in_use_name_the_variable_meant(
    config_dir: Path, file: str, text: str, meant: str
) -> None:
    (config_dir / file).write_text(text)
    _env(config_dir, f"{meant}={KEY}{KEY}\n")
    with pytest.raises(ConfigLoadError) as caught:
        load_control_plane(config_dir, environ={})
    assert f"did you mean ${{{meant}}}?" in str(caught.value)


def test_similar_names() -> None:
    environ = {"OPENAI_API_KEY": "x", "HOME": "/h", "EMPTY_KEY": ""}
    assert similar_variable("OPENAI_APIKEY", environ) == "OPENAI_API_KEY"
    assert similar_variable("openai_api_key", environ) == "OPENAI_API_KEY"
    assert similar_variable("ANTHROPIC_KEY", environ) is None
    assert similar_variable("EMPTY_KEYS", environ) is None  # an empty value is not set
