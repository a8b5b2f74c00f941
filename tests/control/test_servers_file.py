"""``servers.yml``: named servers, each with its own token from the environment or ``.env``."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.control import load_control_plane
from bridge.control.plane import ControlPlaneStore
from bridge.control.problems import ConfigLoadError
from bridge.control.servers_file import NO_SERVERS

LOBBY = "l" * 43
SURVIVAL = "s" * 43


def _write(config_dir: Path, servers: str, env: str = "") -> None:
    (config_dir / "servers.yml").write_text(servers, encoding="utf-8")
    env_file = config_dir / ".env"
    env_file.write_text(env, encoding="utf-8")
    env_file.chmod(0o600)


def _problems(config_dir: Path) -> list[str]:
    with pytest.raises(ConfigLoadError) as caught:
        load_control_plane(config_dir, environ={})
    return [str(problem) for problem in caught.value.problems]


def test_without_the_file_there_are_no_named_servers_and_no_warning(config_dir: Path) -> None:
    plane = load_control_plane(config_dir, environ={})
    assert plane.servers == NO_SERVERS
    assert not any("servers.yml" in str(w) for w in plane.warnings)


def test_each_server_has_its_token_from_env_and_the_tokens_are_redacted(config_dir: Path) -> None:
    _write(
        config_dir,
        "schema: 1\nservers:\n  lobby:\n    token: ${LOBBY_LINK_TOKEN}\n"
        "  survival:\n    token: ${SURVIVAL_LINK_TOKEN}\n",
        f"LOBBY_LINK_TOKEN={LOBBY}\n",
    )
    plane = load_control_plane(config_dir, environ={"SURVIVAL_LINK_TOKEN": SURVIVAL})
    assert plane.servers.token("lobby") == LOBBY
    assert plane.servers.token("survival") == SURVIVAL
    assert plane.servers.token("default") is None and plane.servers.token("creative") is None
    redacted = plane.redact(f"a {LOBBY} b {SURVIVAL}")
    assert LOBBY not in redacted and SURVIVAL not in redacted and redacted.startswith("a ")
    assert LOBBY not in repr(plane.servers) and SURVIVAL not in str(plane.servers)


@pytest.mark.parametrize(
    ("servers", "env", "expected"),
    [
        # The token written into the file instead of a reference.
        (
            f"schema: 1\nservers:\n  lobby:\n    token: {LOBBY}\n",
            "",
            "servers.yml:4:5: servers.lobby.token: must be an environment reference",
        ),
        # A reference to a variable that is not set.
        (
            "schema: 1\nservers:\n  lobby:\n    token: ${NOPE}\n",
            "",
            "servers.yml:4:5: servers.lobby.token: ${NOPE} is not set",
        ),
        # Too short to be a token.
        (
            "schema: 1\nservers:\n  lobby:\n    token: ${SHORT}\n",
            "SHORT=abc\n",
            "servers.yml:4:5: servers.lobby.token: ${SHORT} holds fewer than 32",
        ),
        # Two servers, one token.
        (
            "schema: 1\nservers:\n  lobby:\n    token: ${A}\n  survival:\n    token: ${B}\n",
            f"A={LOBBY}\nB={LOBBY}\n",
            "servers.yml:6:5: servers.survival.token: the same token as server 'lobby'",
        ),
        # The reserved id of link.token.
        (
            "schema: 1\nservers:\n  default:\n    token: ${A}\n",
            f"A={LOBBY}\n",
            "'default' is the server of link.token",
        ),
        # An id the plugin could not send.
        (
            "schema: 1\nservers:\n  Lobby!:\n    token: ${A}\n",
            f"A={LOBBY}\n",
            "servers.yml:3:3: servers.Lobby!",
        ),
        # A typo in a field name.
        (
            "schema: 1\nservers:\n  lobby:\n    tokn: ${A}\n",
            f"A={LOBBY}\n",
            "servers.yml:4:5: servers.lobby.tokn: unknown field; did you mean 'token'?",
        ),
    ],
)
def test_bad_entries_are_refused_with_file_line_and_field_and_never_the_token(
    config_dir: Path, servers: str, env: str, expected: str
) -> None:
    _write(config_dir, servers, env)
    problems = _problems(config_dir)
    assert any(expected in problem for problem in problems), problems
    assert not any(LOBBY in problem for problem in problems)


def test_a_reload_adds_a_server_and_a_bad_reload_keeps_the_old_servers(config_dir: Path) -> None:
    store = ControlPlaneStore(config_dir, environ={})
    assert store.current.servers.token("lobby") is None
    _write(config_dir, "schema: 1\nservers:\n  lobby:\n    token: ${A}\n", f"A={LOBBY}\n")
    assert store.reload().servers.token("lobby") == LOBBY
    _write(config_dir, "schema: 1\nservers:\n  lobby:\n    token: ${MISSING}\n", f"A={LOBBY}\n")
    with pytest.raises(ConfigLoadError):
        store.reload()
    assert store.current.servers.token("lobby") == LOBBY


def _policy_folder(config_dir: Path, lobby_whitelist: str) -> None:
    (config_dir / "servers" / "lobby").mkdir(parents=True)
    (config_dir / "servers" / "lobby" / "whitelist.yml").write_text(lobby_whitelist)
    (config_dir / "servers" / "lobby" / "message.yml").write_text(
        "schema: 1\ngates:\n  busy: '<gray>The lobby assistant is busy.'\n"
    )
    _write(
        config_dir,
        "schema: 1\nservers:\n  lobby:\n    token: ${A}\n"
        "    whitelist: servers/lobby/whitelist.yml\n    messages: servers/lobby/message.yml\n"
        "  survival:\n    token: ${B}\n",
        f"A={LOBBY}\nB={SURVIVAL}\n",
    )


def test_a_server_may_have_its_own_policy_files(config_dir: Path) -> None:
    _policy_folder(config_dir, "schema: 1\nplayer:\n  - 'spawn'\n")
    plane = load_control_plane(config_dir, environ={})
    lobby = plane.server_policies["lobby"]
    assert lobby.whitelist is not None and [r for r in lobby.whitelist.player] == ["spawn"]
    assert lobby.messages is not None and "lobby" in lobby.messages.gates.busy
    assert lobby.tools is None and lobby.functions is None
    assert "survival" not in plane.server_policies  # it takes the network-wide files


@pytest.mark.parametrize(
    ("servers_extra", "lobby_whitelist", "expected"),
    [
        # A rule problem is located in the server's own file.
        (
            "",
            "schema: 1\nplayer:\n  - 'time set ('\n",
            "servers/lobby/whitelist.yml:3:5: player[0]",
        ),
        # A server's own rule that could reach a never-listed command, at its line.
        (
            "",
            "schema: 1\nconsole:\n  - 'spawn'\n  - 'e?ban .*'\n",
            "servers/lobby/whitelist.yml:4:5: console[1]",
        ),
        # A file named but missing.
        (
            "    tools: servers/lobby/tools.yml\n",
            "schema: 1\n",
            "servers/lobby/tools.yml: not found",
        ),
        # A path leaving the folder.
        ("    tools: ../tools.yml\n", "schema: 1\n", "servers.lobby.tools: must be a .yml file"),
        ("    tools: /etc/tools.yml\n", "schema: 1\n", "servers.lobby.tools: must be a .yml file"),
    ],
)
def test_a_bad_policy_file_refuses_the_plane_naming_its_file(
    config_dir: Path, servers_extra: str, lobby_whitelist: str, expected: str
) -> None:
    _policy_folder(config_dir, lobby_whitelist)
    servers = (config_dir / "servers.yml").read_text()
    (config_dir / "servers.yml").write_text(
        servers.replace("    messages:", servers_extra + "    messages:")
    )
    problems = _problems(config_dir)
    assert any(expected in problem for problem in problems), problems
