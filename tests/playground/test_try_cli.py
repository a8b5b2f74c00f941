"""``mineclaw-bridge try`` driven as a person would: type a line, read what comes back.

The real command in its own process: the real bridge, the simulated server over a loopback
WebSocket, the scripted offline model over loopback HTTP. Each step waits for the line it
expects (one generous bound each), never for a time.
"""

from __future__ import annotations

import asyncio
import os
import select
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.control import init_config_dir
from bridge.playground.scripted_model import ScriptedModelServer

from .try_process import WAIT_S, TryProcess

NO_COOLDOWNS = (
    "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
    "environment:\n  tool_cooldown_ms: 0\n"
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """An owner's folder with no key and no cooldowns (so one may ask and call tools again at
    once; the cooldowns are gates the playground shows, not what this test is about)."""
    config = tmp_path / "mineclaw-config"
    init_config_dir(config)
    (config / "config.yml").write_text(NO_COOLDOWNS)
    return config


@pytest.fixture
def started(folder: Path) -> Iterator[TryProcess]:
    playground = TryProcess(folder.parent)
    try:
        yield playground
    finally:
        playground.kill()


def test_a_conversation_a_tool_call_a_confirmation_and_a_switch_offline(
    started: TryProcess, folder: Path
) -> None:
    p = started
    p.expect(r"no provider key: put OPENAI_API_KEY=\.\.\. in mineclaw-config/\.env.*Ollama")
    p.expect(r"start a line with @ai")

    p.type("@ai hello there")
    p.expect(r"^\[chat\] <Steve> @ai hello there$")
    p.expect(r"^\[chat\] \[Mineclaw\] @Steve \[scripted offline model\] I answer")
    p.expect(r"┊ bridge: turn\.end .*outcome=\"completed\" .*tokens=\d+")

    p.type("@ai where am I")
    p.expect(r"^\[action bar → Steve\] .*player_snapshot")
    p.expect(r"┊ bridge: model asked for player_snapshot \{\}")
    p.expect(r"┊ bridge: tool\.call .*name=\"player_snapshot\"")
    p.expect(r"┊ bridge: model read the tool result: .*\"world\": \"world\"")
    p.expect(r"\[scripted offline model\] player_snapshot said: you are in world at x=10\.5")
    p.expect(r"┊ bridge: turn\.end .*tool_calls=1")

    p.type("@ai ask me first")
    p.expect(r"^\[prompt → Steve\] .*Shall I go on\? \[\[Yes\]\] \[\[No\]\]")
    p.type("y")
    p.expect(r"┊ bridge: approval\.answer .*verdict=\"approved\"")
    p.expect(r'\[scripted offline model\] ask_player said: your answer was "yes"')
    p.expect(r"┊ bridge: turn\.end")

    p.type("@ai make it day")
    p.expect(r"┊ bridge: run_command\.decision .*command=\"time set day\".*status=\"refused\"")
    p.expect(r"\[scripted offline model\] run_command said: the bridge")
    p.expect(r"┊ bridge: turn\.end")

    p.type("/as Alex")
    p.expect(r"^» you are Alex now$")
    p.type("y")
    p.expect(r"^» Alex has no confirmation prompt to answer$")

    # A command for another player runs only once that player accepts it.
    p.type("/as Steve")
    p.expect(r"^» you are Steve now$")
    p.type("@ai make Alex wave")
    p.expect(r"^\[prompt → Alex\] .*on behalf of Steve, to run me waves as you.*\[\[Accept\]\]")
    p.type("y")  # Steve has no prompt: his key answers nothing of Alex's
    p.expect(r"^» Steve has no confirmation prompt to answer$")
    p.type("/as Alex")
    p.expect(r"^» you are Alex now$")
    p.type("y")
    p.expect(r"┊ server: Alex ran /me waves \(simulated: nothing changes\)")
    p.expect(
        r"┊ bridge: run_command\.decision .*confirmed=true .*player=\"Alex\" requester=\"Steve\""
    )
    p.expect(r"┊ bridge: turn\.end")

    p.type("@ai provider 429")  # a provider that fails: the player is told, the turn dropped
    p.expect(r"^\[private → Alex\] The assistant's model provider is busy")
    p.expect(r"┊ bridge: provider\.failure .*HTTP 429")
    p.expect(r"┊ bridge: turn\.end .*outcome=\"dropped\"")
    p.type("/mineclaw clear")  # an operator's command: not for Alex
    p.expect(r"^\[private → Alex\] You may not use /mineclaw clear\.$")
    p.type("/as Alex op")
    p.expect(r"^» you are Alex \(op\) now$")
    p.type("/mineclaw status")
    p.expect(r"^\[private → Alex\] model: playground/scripted$")
    p.type("/ai who is online")
    p.expect(r"\[private → Alex\] .*\[scripted offline model\] online_players said")

    p.type("/disconnect")  # the server's link drops: the bridge sees it go, nothing is sent
    p.expect(r"┊ bridge: link\.down")
    p.type("@ai hello")
    p.expect(r"^» not sent: the server is not linked to the bridge \(/connect\)$")
    p.type("/connect")
    p.expect(r"┊ bridge: link\.up")
    p.type("@ai hello again")
    p.expect(r"^\[chat\] \[Mineclaw\] @Alex \[scripted offline model\] I answer")

    p.type("/quit")
    p.expect(r"^» bye$")
    assert p.wait() == 0
    # A rehearsal: the owner's own folder got no archive, audit or token from it.
    assert not (folder / "data").exists()
    assert not (folder / "link.token").exists()


def test_lines_the_playground_cannot_do_are_said_so(started: TryProcess) -> None:
    p = started
    p.expect(r"start a line with @ai")
    p.type("/as Not A Name")
    p.expect(r"^» usage: /as NAME or /as NAME op$")
    p.type("/as bad-name!")
    p.expect(r"^» bad-name! is not a player name: 1-16 of A-Z, a-z, 0-9 and _$")
    p.type("/gamemode creative")
    p.expect(r"^» not simulated: /gamemode")
    p.type("n")
    p.expect(r"^» Steve has no confirmation prompt to answer$")
    p.proc.stdin.close()  # type: ignore[union-attr]  # end of input leaves like /quit
    assert p.wait() == 0


def test_a_broken_folder_is_refused_with_its_file_and_line(tmp_path: Path) -> None:
    config = tmp_path / "mineclaw-config"
    init_config_dir(config)
    (config / "config.yml").write_text("schema: 1\nrate_limits: [\n")
    p = TryProcess(tmp_path)
    try:
        p.expect(r"^mineclaw-bridge: 2 configuration problems:$")
        p.expect(r"^  config\.yml:3:1: rate_limits: YAML syntax error")
        assert p.wait() == 1
    finally:
        p.kill()


def test_on_a_terminal_it_prompts_as_the_player_and_dims_the_bridge(folder: Path) -> None:
    """Through a pseudo-terminal, as a person types: the prompt names who you are, the bridge
    column is dimmed (SGR 2), players' lines are not."""
    controller, terminal = os.openpty()
    environ = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "bridge", "try"],
        cwd=folder.parent,
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env={**environ, "PYTHONPATH": str(Path(__file__).parents[2]), "TERM": "xterm"},
    )
    os.close(terminal)
    seen = b""

    def until(wanted: bytes) -> None:
        nonlocal seen
        while wanted not in seen:
            ready, _, _ = select.select([controller], [], [], WAIT_S)
            assert ready, f"no {wanted!r} within {WAIT_S} s; got {seen[-2000:]!r}"
            try:
                seen += os.read(controller, 65536)
            except OSError:  # the terminal closed: the process ended
                raise AssertionError(f"ended before {wanted!r}; got {seen[-2000:]!r}") from None

    try:
        until(b"Steve> ")
        os.write(controller, b"/as Alex op\n")
        until(b"Alex (op)> ")
        os.write(controller, b"@ai where am I\n")
        until(b"player_snapshot said")
        until(b"\x1b[2m    \xe2\x94\x8a bridge: turn.end")  # "┊ bridge:" dimmed
        assert b"\x1b[2m[action bar" not in seen
        os.write(controller, b"/quit\n")
        until(b"bye")
        assert proc.wait(timeout=WAIT_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(controller)


def test_with_a_key_the_owners_own_model_answers(folder: Path) -> None:
    """A folder whose default model needs no missing key is served as it is: no key line, and
    turns go to the owner's provider (here a loopback server of the test's own)."""
    loop = asyncio.new_event_loop()
    model = ScriptedModelServer()
    loop.run_until_complete(model.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    (folder / "providers.yml").write_text(
        "schema: 1\ndefault: owner/own-model\nproviders:\n  owner:\n    api:\n"
        f"      type: openai_chat_completions\n      base_url: {model.base_url}\n"
        "    api_key: sk-owner-literal-key-0123\n"
        "models:\n  owner/own-model:\n"
        "    limits: {context_window: 100000, max_output_tokens: 500}\n"
    )
    p = TryProcess(folder.parent)
    try:
        p.expect(r"^» a simulated server is linked .* answering with your default model$")
        p.type("@ai hello")
        p.expect(r"┊ bridge: turn\.start .*model=\"owner/own-model\"")
        p.expect(r"┊ bridge: turn\.end .*outcome=\"completed\"")
        assert not any("no provider key" in line for line in p.lines)
        assert not any("provider owner:" in line for line in p.lines)  # it answers
        p.type("/quit")
        assert p.wait() == 0
    finally:
        p.kill()
        asyncio.run_coroutine_threadsafe(model.close(), loop).result(WAIT_S)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(WAIT_S)
        loop.close()


def test_a_default_model_whose_server_does_not_answer_is_said_at_start(folder: Path) -> None:
    """The owner pointed providers.yml at a local server that is not running: the first
    question was answered "the model provider is busy" and nothing said why."""
    closed = socket.socket()  # bound, never listening: a connection to it is refused
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    (folder / "providers.yml").write_text(
        "schema: 1\ndefault: ollama/llama3\nproviders:\n  ollama:\n    api:\n"
        f"      type: openai_chat_completions\n      base_url: http://127.0.0.1:{port}/v1\n"
        "models:\n  ollama/llama3:\n    limits: {context_window: 8192, max_output_tokens: 500}\n"
    )
    p = TryProcess(folder.parent)
    try:
        p.expect(
            r"^» provider ollama: unreachable: connection refused; start its server or fix "
            r"providers\.yml, then /mineclaw reload .* --offline for the scripted model$"
        )
        p.type("/quit")
        assert p.wait() == 0
    finally:
        p.kill()
        closed.close()
