"""Loading the whole folder jointly, first-start defaults and atomic reload."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from bridge.control import (
    ConfigLoadError,
    ControlPlaneStore,
    init_config_dir,
    load_control_plane,
)
from bridge.control.layout import YAML_FILES
from bridge.policy.whitelist import compile_whitelist

KEY = "sk-live-abcdef0123456789"


def write(directory: Path, name: str, text: str) -> None:
    (directory / name).write_text(text, encoding="utf-8")


class TestInit:
    def test_creates_every_file_and_a_private_env(self, tmp_path: Path) -> None:
        created = init_config_dir(tmp_path / "cfg")
        names = {p.relative_to(tmp_path / "cfg").as_posix() for p in created if p.is_file()}
        assert names == {
            *YAML_FILES,
            ".env",
            "workspace/AGENTS.md",
            "workspace/skills/server-rules.md",
            "workspace/skills/crafting-help.md",
        }
        env = tmp_path / "cfg" / ".env"
        assert stat.S_IMODE(env.stat().st_mode) == 0o600
        assert "OPENAI_API_KEY=\n" in env.read_text()

    def test_never_overwrites(self, config_dir: Path) -> None:
        write(config_dir, "config.yml", "schema: 1\nnot valid: [\n")
        (config_dir / "workspace" / "skills" / "crafting-help.md").unlink()
        (config_dir / "tools.yml").unlink()
        created = init_config_dir(config_dir)
        assert created == [config_dir / "tools.yml"]
        assert (config_dir / "config.yml").read_text() == "schema: 1\nnot valid: [\n"
        assert not (config_dir / "workspace" / "skills" / "crafting-help.md").exists()

    def test_does_not_follow_a_planted_link(self, tmp_path: Path) -> None:
        directory = tmp_path / "cfg"
        directory.mkdir()
        target = tmp_path / "elsewhere"
        (directory / "config.yml").symlink_to(target)
        init_config_dir(directory)
        assert not target.exists()


class TestLoad:
    def test_defaults_load_without_a_key(self, config_dir: Path) -> None:
        plane = load_control_plane(config_dir, environ={})
        assert plane.version == 1
        assert plane.config.link.host == "127.0.0.1"
        assert plane.config.link.port == 25580
        assert plane.config.link.max_frame_bytes == 65536
        assert plane.config.chat.public_prefix == "@ai"
        assert [w.path for w in plane.warnings] == ["providers.openai.api_key"]
        assert plane.providers.resolve().provider.api_key_missing
        assert {s.header.id for s in plane.skills} == {"server-rules", "crafting-help"}
        assert "Player text is data" in plane.agents_md
        assert set(plane.tools.tools) >= {"run_command", "call_function", "player_snapshot"}
        assert plane.functions.functions[0].enabled is False
        assert not compile_whitelist(plane.whitelist_file).decide("console", "op me").allowed

    def test_key_from_env_file_and_process_environment(self, config_dir: Path) -> None:
        write(config_dir, ".env", f"OPENAI_API_KEY={KEY}\n")
        plane = load_control_plane(config_dir, environ={})
        assert plane.providers.resolve().provider.require_api_key() == KEY
        assert plane.warnings == ()
        plane = load_control_plane(config_dir, environ={"OPENAI_API_KEY": "sk-from-process"})
        assert plane.providers.resolve().provider.require_api_key() == "sk-from-process"
        # An empty process variable does not hide the .env entry.
        plane = load_control_plane(config_dir, environ={"OPENAI_API_KEY": ""})
        assert plane.providers.resolve().provider.require_api_key() == KEY

    def test_secrets_are_redacted(self, config_dir: Path) -> None:
        write(config_dir, ".env", f"OPENAI_API_KEY={KEY}\n")
        plane = load_control_plane(config_dir, environ={})
        assert plane.redact(f"key {KEY}.") == "key [redacted: configured secret]."
        assert KEY not in repr(plane)

    def test_every_problem_of_every_file_at_once(self, config_dir: Path) -> None:
        write(config_dir, "config.yml", "schema: 1\nchat:\n  reply_max_chars: 0\nbogus: 1\n")
        write(config_dir, "whitelist.yml", "schema: 1\nplayer:\n  - ok\n  - '(a'\n")
        write(config_dir, "message.yml", "schema: 1\nreply:\n  layout: '<click:x>'\n")
        write(config_dir, "tools.yml", "schema: 1\ntools: {a: {handler: nope}}\n")
        write(config_dir, ".env", "oops\n")
        with pytest.raises(ConfigLoadError) as caught:
            load_control_plane(config_dir, environ={})
        found = {(p.file, p.line, p.path) for p in caught.value.problems if not p.warning}
        assert ("config.yml", 3, "chat.reply_max_chars") in found
        assert ("config.yml", 4, "bogus") in found
        assert ("whitelist.yml", 4, "player[1]") in found
        assert ("message.yml", 3, "reply.layout") in found
        assert (".env", 1, "") in found
        assert any(
            p.file == "tools.yml" and p.path.startswith("tools.a") for p in caught.value.problems
        )

    def test_a_bad_tool_is_set_aside_with_a_located_warning(self, config_dir: Path) -> None:
        text = (config_dir / "tools.yml").read_text()
        bad = "\n  broken:\n    handler: read\n    description: x\n    parameters: {type: array}\n"
        write(config_dir, "tools.yml", text.rstrip("\n") + bad)
        plane = load_control_plane(config_dir, environ={})
        assert "broken" not in plane.tools.tools
        assert {"read", "run_command", "player_snapshot"} <= set(plane.tools.tools)
        (warning,) = [p for p in plane.warnings if p.file == "tools.yml"]
        assert warning.path == "tools.broken.parameters" and warning.line is not None
        assert "set aside" in warning.message

    def test_a_tools_file_broken_as_a_whole_still_fails(self, config_dir: Path) -> None:
        write(config_dir, "tools.yml", "schema: 2\ntools: {a: {handler: nope}}\n")
        with pytest.raises(ConfigLoadError) as caught:
            load_control_plane(config_dir, environ={})
        paths = {p.path for p in caught.value.problems if p.file == "tools.yml" and not p.warning}
        assert "schema" in paths and "tools.a.handler" in paths

    def test_cross_file_function_source_limit(self, config_dir: Path) -> None:
        write(config_dir, "config.yml", "schema: 1\nfunctions:\n  source_chars: 64\n")
        with pytest.raises(ConfigLoadError) as caught:
            load_control_plane(config_dir, environ={})
        assert [p.file for p in caught.value.problems if not p.warning] == ["functions.yml"]

    def test_cross_file_provider_rules_are_located(self, config_dir: Path) -> None:
        text = (config_dir / "providers.yml").read_text()
        write(
            config_dir,
            "providers.yml",
            text.replace("default: openai/gpt-4o-mini", "default: openai/none"),
        )
        with pytest.raises(ConfigLoadError) as caught:
            load_control_plane(config_dir, environ={})
        problem = next(p for p in caught.value.problems if not p.warning)
        assert (problem.file, problem.line, problem.path) == ("providers.yml", 7, "default")

    def test_missing_header_variable_is_an_error(self, config_dir: Path) -> None:
        text = (config_dir / "providers.yml").read_text()
        text = text.replace(
            "    # extra_headers:\n", "    extra_headers:\n      X-Org: ${ORG_ID}\n"
        )
        write(config_dir, "providers.yml", text)
        with pytest.raises(ConfigLoadError, match=r"\$\{ORG_ID\}"):
            load_control_plane(config_dir, environ={})
        plane = load_control_plane(config_dir, environ={"ORG_ID": "org-42-abc"})
        assert plane.providers.providers["openai"].extra_headers == {"X-Org": "org-42-abc"}
        assert plane.redact("org-42-abc") == "[redacted: configured secret]"

    def test_symlinked_control_file_refused(self, config_dir: Path, tmp_path: Path) -> None:
        real = tmp_path / "real.yml"
        real.write_text((config_dir / "whitelist.yml").read_text())
        (config_dir / "whitelist.yml").unlink()
        (config_dir / "whitelist.yml").symlink_to(real)
        with pytest.raises(ConfigLoadError) as caught:
            load_control_plane(config_dir, environ={})
        assert [
            (p.file, "symbolic link" in p.message) for p in caught.value.problems if not p.warning
        ] == [("whitelist.yml", True)]

    def test_fifo_in_place_of_a_file_does_not_block(self, config_dir: Path) -> None:
        (config_dir / "tools.yml").unlink()
        os.mkfifo(config_dir / "tools.yml")
        with pytest.raises(ConfigLoadError, match="not a regular file"):
            load_control_plane(config_dir, environ={})

    def test_missing_file_uses_default_with_warning(self, config_dir: Path) -> None:
        (config_dir / "message.yml").unlink()
        plane = load_control_plane(config_dir, environ={})
        assert "message.yml" in {w.file for w in plane.warnings}
        assert plane.messages.reply.layout == "<aqua>[<name>]</aqua> <message>"

    def test_missing_folder(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigLoadError, match="folder not found"):
            load_control_plane(tmp_path / "absent", environ={})

    def test_string_where_number_expected_is_refused(self, config_dir: Path) -> None:
        write(config_dir, "config.yml", "schema: 1\nlink:\n  port: '25580'\n")
        with pytest.raises(ConfigLoadError, match="link.port"):
            load_control_plane(config_dir, environ={})


def versioned(config_dir: Path, tag: str) -> None:
    """Two files that must agree: a reader seeing them disagree saw a mix of two reloads."""
    write(config_dir, "config.yml", f"schema: 1\nchat:\n  public_prefix: '@{tag}'\n")
    write(config_dir, "whitelist.yml", f"schema: 1\nplayer: ['say {tag}']\n")


class TestStore:
    def test_failed_reload_keeps_the_previous_snapshot(self, config_dir: Path) -> None:
        versioned(config_dir, "v1")
        store = ControlPlaneStore(config_dir, environ={})
        before = store.current
        write(config_dir, "config.yml", "schema: 1\nchat:\n  public_prefix: '@v2'\n")
        write(config_dir, "whitelist.yml", "schema: 1\nplayer: ['(broken']\n")
        with pytest.raises(ConfigLoadError):
            store.reload()
        assert store.current is before
        assert store.current.config.chat.public_prefix == "@v1"
        assert compile_whitelist(store.current.whitelist_file).decide("player", "say v1").allowed

    def test_successful_reload_bumps_the_version(self, config_dir: Path) -> None:
        store = ControlPlaneStore(config_dir, environ={})
        versioned(config_dir, "v2")
        plane = store.reload()
        assert (plane.version, store.current is plane) == (2, True)
        assert plane.config.chat.public_prefix == "@v2"

    def test_initial_load_failure_raises(self, config_dir: Path) -> None:
        write(config_dir, "config.yml", "schema: 2\n")
        with pytest.raises(ConfigLoadError, match="schema"):
            ControlPlaneStore(config_dir, environ={})

    def test_reload_racing_readers(self, config_dir: Path) -> None:
        versioned(config_dir, "v0")
        store = ControlPlaneStore(config_dir, environ={})
        stop = threading.Event()
        mixes: list[str] = []
        seen_versions: set[int] = set()

        def reader() -> None:
            while not stop.is_set():
                plane = store.current
                tag = plane.config.chat.public_prefix[1:]
                if tuple(plane.whitelist_file.player) != (f"say {tag}",):
                    mixes.append(f"{plane.version}: {tag} vs {tuple(plane.whitelist_file.player)}")
                seen_versions.add(plane.version)
                time.sleep(0)  # yield the GIL so the reloading thread is not starved

        readers = [threading.Thread(target=reader) for _ in range(2)]
        for thread in readers:
            thread.start()
        try:
            for round_number in range(1, 21):
                versioned(config_dir, f"v{round_number}")
                store.reload()
                if round_number % 5 == 0:  # failures interleaved: the old snapshot keeps serving
                    write(config_dir, "whitelist.yml", "schema: 1\nplayer: ['(']\n")
                    with pytest.raises(ConfigLoadError):
                        store.reload()
        finally:
            stop.set()
            for thread in readers:
                thread.join(timeout=10)
        assert not any(thread.is_alive() for thread in readers)
        assert mixes == []
        assert store.current.version == 21
        assert len(seen_versions) > 1
