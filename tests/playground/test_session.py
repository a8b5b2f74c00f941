"""The playground's folder handling: the key check, the copy, the scripted providers file."""

from __future__ import annotations

from pathlib import Path

from bridge.control import init_config_dir, load_control_plane
from bridge.playground.scripted_model import MODEL_NAME
from bridge.playground.session import copy_folder, missing_key, scripted_providers_yml


def test_a_fresh_folder_misses_the_default_key_until_it_is_set(tmp_path: Path) -> None:
    init_config_dir(tmp_path / "c")
    assert missing_key(tmp_path / "c", environ={}) == "OPENAI_API_KEY"
    assert missing_key(tmp_path / "c", environ={"OPENAI_API_KEY": "sk-x"}) is None
    (tmp_path / "c" / ".env").write_text("OPENAI_API_KEY=sk-from-dotenv\n")
    assert missing_key(tmp_path / "c", environ={}) is None


def test_the_copy_leaves_the_data_and_the_link_token_behind(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    init_config_dir(folder)
    (folder / "data").mkdir()
    (folder / "data" / "archive.sqlite3").write_text("x")
    (folder / "link.token").write_text("t" * 43 + "\n")
    (folder / "skills" / "data").mkdir(parents=True, exist_ok=True)  # only the top is skipped
    copy = copy_folder(folder, tmp_path / "scratch")
    assert not (copy / "data").exists() and not (copy / "link.token").exists()
    assert (copy / "skills" / "data").is_dir()
    assert (copy / "providers.yml").read_text() == (folder / "providers.yml").read_text()


def test_the_scripted_providers_file_is_valid_and_needs_no_key(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    init_config_dir(folder)
    (folder / "providers.yml").write_text(scripted_providers_yml("http://127.0.0.1:9/v1"))
    plane = load_control_plane(folder, environ={})
    assert plane.providers.default == MODEL_NAME
    assert missing_key(folder, environ={}) is None
