"""``mineclaw-bridge provider test`` against the local replay server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bridge.cli import main
from bridge.control import init_config_dir

from .provider_expectations import expected_responses, interaction
from .provider_replay_server import ReplayServer, Reply

CLI_SECRET = "sk-cli-secret-value"


def write_config(
    directory: Path,
    base_url: str,
    api_type: str = "openai_responses",
    *,
    api_key: str = CLI_SECRET,
    native_tools: str = "[]",
) -> Path:
    init_config_dir(directory)
    (directory / "providers.yml").write_text(
        f"""schema: 1
default: local/test-model
providers:
  local:
    api:
      type: {api_type}
      base_url: {base_url}
    api_key: {api_key}
    native_tools: {native_tools}
    retry:
      max_attempts: 1
      initial_backoff_ms: 0
      max_backoff_ms: 0
models:
  local/test-model:
    limits:
      context_window: 8192
      max_output_tokens: 1024
""",
        encoding="utf-8",
    )
    return directory


async def run_cli(*argv: str) -> int:
    return await asyncio.wait_for(asyncio.to_thread(main, list(argv)), timeout=60)


async def test_streams_text_and_reasoning(
    replay_server: ReplayServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "pydantic-ai/test_openai_responses_thinking_part_iter"
    native = "[{type: web_search, search_context_size: low}]"
    config = write_config(tmp_path / "cfg", replay_server.recording_url(name), native_tools=native)
    code = await run_cli("provider", "test", "--config", str(config), "how do I cross?")
    out = capsys.readouterr().out
    expected = expected_responses(interaction(name, 0).body)
    assert code == 0, out
    assert "local/test-model" in out and "reasoning:" in out and "done" in out
    flat = " ".join(out.split())
    assert " ".join(expected.text.split())[:200] in flat
    assert expected.usage is not None
    assert f"{expected.usage['input_tokens']} in" in out
    assert f"{expected.usage['output_tokens']} out" in out
    sent = replay_server.requests[0].json()
    tool_names = {tool.get("name") for tool in sent["tools"]}
    assert {"player_snapshot", "run_command"} <= tool_names
    assert {"type": "web_search", "search_context_size": "low"} in sent["tools"]
    assert sent["input"] == [{"role": "user", "content": "how do I cross?"}]


async def test_shows_tool_calls_without_running_them(
    replay_server: ReplayServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "pydantic-ai/test_openai_responses_streaming_usage"
    config = write_config(tmp_path / "cfg", replay_server.recording_url(name))
    code = await run_cli("provider", "test", "--config", str(config), "compute")
    out = capsys.readouterr().out
    assert code == 0, out
    call_id, tool, arguments = expected_responses(interaction(name, 0).body).tool_calls[0]
    assert f"tool call {tool}({arguments}) (not run)" in out
    assert len(replay_server.requests) == 1


async def test_provider_error_is_clear_and_never_shows_the_key(
    replay_server: ReplayServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replay_server.script(
        Reply(
            status=401,
            content_type="application/json",
            chunks=[
                b'{"error":{"code":"invalid_api_key","message":"Incorrect API key: '
                + CLI_SECRET.encode()
                + b'"}}'
            ],
        )
    )
    config = write_config(tmp_path / "cfg", replay_server.base_url, "openai_chat_completions")
    code = await run_cli("provider", "test", "--config", str(config), "hi")
    out = capsys.readouterr().out
    assert code == 1
    assert "HTTP 401 invalid_api_key" in out
    assert CLI_SECRET not in out


async def test_unknown_model_and_invalid_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path / "cfg", "http://127.0.0.1:9/v1")
    code = await run_cli("provider", "test", "--config", str(config), "--model", "nope/x", "hi")
    assert code == 2 and "nope/x" in capsys.readouterr().out
    (config / "providers.yml").write_text("schema: 1\ndefault: [\n", encoding="utf-8")
    code = await run_cli("provider", "test", "--config", str(config), "hi")
    out = capsys.readouterr().out
    assert code == 1 and "invalid" in out and "providers.yml" in out


async def test_missing_key_names_the_variable_and_sends_nothing(
    replay_server: ReplayServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MINECLAW_TEST_UNSET_KEY", raising=False)
    config = write_config(
        tmp_path / "cfg", replay_server.base_url, api_key="${MINECLAW_TEST_UNSET_KEY}"
    )
    code = await run_cli("provider", "test", "--config", str(config), "hi")
    out = capsys.readouterr().out
    assert code == 1 and "MINECLAW_TEST_UNSET_KEY" in out
    assert replay_server.requests == []


async def test_text_with_lone_surrogates_is_shown_replaced(
    replay_server: ReplayServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # json.dumps escapes each lone half: valid bytes on the wire, invalid text once decoded.
    chunks = [
        {"choices": [{"index": 0, "delta": {"reasoning_content": "hm \udfff"}}]},
        {"choices": [{"index": 0, "delta": {"content": "Hi \ud800!"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    body = [f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks] + [b"data: [DONE]\n\n"]
    replay_server.script(Reply(chunks=body))
    config = write_config(tmp_path / "cfg", replay_server.base_url, "openai_chat_completions")
    code = await run_cli("provider", "test", "--config", str(config), "hello")
    out = capsys.readouterr().out
    assert code == 0, out
    assert "Hi \ufffd!" in out and "hm \ufffd" in out
