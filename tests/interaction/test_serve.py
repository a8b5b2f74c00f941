"""``mineclaw-bridge serve`` as a real process: start, address, token file, clean stop."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import ssl
import stat
import sys
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidMessage

from .processes import START_TIMEOUT, BridgeProcess, free_port


async def test_serve_creates_the_folder_prints_where_it_listens_and_stops_on_ctrl_c(
    tmp_path: Path,
) -> None:
    config = tmp_path / "new" / "config"
    port = free_port()
    bridge = await BridgeProcess.start(config, port=port)
    try:
        assert bridge.url == f"ws://127.0.0.1:{port}/link"
        assert bridge.token_file == (config / "link.token").resolve()
        assert stat.S_IMODE(bridge.token_file.stat().st_mode) == 0o600
        async with connect(bridge.url) as ws:
            challenge = json.loads(await asyncio.wait_for(ws.recv(), START_TIMEOUT))
            assert challenge["type"] == "hello.challenge"
    finally:
        code = await bridge.interrupt()
    assert code == 0, bridge.output()
    assert bridge.stdout.lines[-1] == "stopped"


async def test_serve_exits_1_and_names_the_problem_on_an_invalid_config(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.yml").write_text("link:\n  port: seventy\n")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bridge", "serve", "--config", str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), START_TIMEOUT)
    assert process.returncode == 1
    assert b"config.yml" in err and b"link.port" in err
    assert b"listening" not in out


async def test_serve_refuses_a_token_file_others_can_read(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    token = config / "link.token"
    token.write_text("t" * 43 + "\n")
    token.chmod(0o644)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bridge", "serve", "--config", str(config), "--port", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(process.communicate(), START_TIMEOUT)
    assert process.returncode == 1
    assert b"link.token" in err and b"chmod 600" in err
    assert b"t" * 43 not in err


async def test_serve_stops_cleanly_on_sigterm_with_a_plugin_connected(tmp_path: Path) -> None:
    bridge = await BridgeProcess.start(tmp_path / "config", port=free_port())
    try:
        async with connect(bridge.url) as ws:
            await asyncio.wait_for(ws.recv(), START_TIMEOUT)
            code = await bridge.interrupt(signal.SIGTERM)
            await asyncio.wait_for(ws.wait_closed(), START_TIMEOUT)
            assert ws.close_code == 1000
    finally:
        await bridge.kill()
    assert code == 0, bridge.output()


@pytest.mark.parametrize(("level", "shown"), [("WARNING", True), ("ERROR", False)])
async def test_serve_logs_at_the_configured_level(tmp_path: Path, level: str, shown: bool) -> None:
    """``logging.level`` was validated but never read: serve always logged at INFO."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.yml").write_text(f"schema: 1\nlogging:\n  level: {level}\n")
    bridge = await BridgeProcess.start(config, port=free_port())
    try:
        async with connect(bridge.url) as ws:
            await asyncio.wait_for(ws.recv(), START_TIMEOUT)  # the challenge
            await ws.send("not json")  # a handshake refused with a warning line
            fault = json.loads(await asyncio.wait_for(ws.recv(), START_TIMEOUT))
            assert fault["type"] == "error", fault
    finally:
        code = await bridge.interrupt()
    assert code == 0, bridge.output()
    assert ("refused: not JSON" in bridge.stderr.tail(200)) is shown, bridge.output()


async def validate(config: Path) -> str:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bridge", "validate", "--config", str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    out, _ = await asyncio.wait_for(process.communicate(), START_TIMEOUT)
    assert process.returncode == 0, out
    return out.decode()


async def test_validate_names_the_values_a_running_bridge_waits_to_restart_for(
    tmp_path: Path,
) -> None:
    """``link.*`` is read only at start: validate on the folder of a running bridge says which
    of its values the bridge is not using, and says nothing once it stopped."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.yml").write_text("schema: 1\n")
    bridge = await BridgeProcess.start(config, port=free_port())
    try:
        assert "runs on this folder" not in await validate(config)  # nothing changed yet
        (config / "config.yml").write_text("schema: 1\nlink:\n  max_frame_bytes: 2048\n")
        said = await validate(config)
        assert f"pid {bridge.process.pid}" in said, said
        assert "link.max_frame_bytes: the running bridge uses 65536, this folder says 2048" in said
    finally:
        code = await bridge.interrupt()
    assert code == 0, bridge.output()
    assert "runs on this folder" not in await validate(config)  # stopped: the state went with it


TLS = Path(__file__).resolve().parent.parent / "data" / "tls"


async def serve_exit(config: Path, *args: str) -> tuple[int | None, bytes, bytes]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bridge", "serve", "--init", "--config", str(config), *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), START_TIMEOUT)
    return process.returncode, out, err


async def test_serve_refuses_a_link_off_this_machine_in_plain_ws(tmp_path: Path) -> None:
    # The link carries chat, commands and tool results after the handshake: plain ws:// stays
    # on loopback; elsewhere it needs a certificate (or a TLS reverse proxy in front).
    code, out, err = await serve_exit(tmp_path / "config", "--host", "0.0.0.0", "--port", "0")
    assert code == 1
    assert b"link.host 0.0.0.0" in err and b"link.tls_cert" in err and b"reverse proxy" in err
    assert b"listening" not in out


async def test_serve_names_a_certificate_it_cannot_load(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.yml").write_text(
        "schema: 1\nlink:\n  tls_cert: missing-cert.pem\n  tls_key: missing-key.pem\n"
    )
    code, out, err = await serve_exit(config, "--port", "0")
    assert code == 1 and b"link.tls_cert" in err and b"missing-cert.pem" in err
    (config / "config.yml").write_text("schema: 1\nlink:\n  tls_cert: cert.pem\n")
    code, out, err = await serve_exit(config, "--port", "0")
    assert code == 1 and b"tls_cert and tls_key go together" in err


async def test_serve_speaks_wss_with_a_certificate(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    for name in ("link-cert.pem", "link-key.pem"):
        (config / name).write_bytes((TLS / name).read_bytes())
    (config / "config.yml").write_text(
        "schema: 1\nlink:\n  tls_cert: link-cert.pem\n  tls_key: link-key.pem\n"
    )
    port = free_port()
    bridge = await BridgeProcess.start(config, port=port)
    try:
        assert bridge.url == f"wss://127.0.0.1:{port}/link"
        trusted = ssl.create_default_context(cafile=str(TLS / "link-cert.pem"))
        async with connect(bridge.url, ssl=trusted) as ws:
            challenge = json.loads(await asyncio.wait_for(ws.recv(), START_TIMEOUT))
            assert challenge["type"] == "hello.challenge"
        # Plain ws:// to the same port gets no link.
        with pytest.raises((OSError, InvalidMessage, TimeoutError)):
            async with connect(f"ws://127.0.0.1:{port}/link", open_timeout=START_TIMEOUT):
                pass
    finally:
        code = await bridge.interrupt()
    assert code == 0, bridge.output()
