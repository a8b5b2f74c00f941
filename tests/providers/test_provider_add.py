"""``mineclaw-bridge provider add`` against a real model server stand-in on loopback: an HTTP
server answering ``/v1/models`` as llama.cpp's server, vLLM or Ollama do, and streaming a chat
completion. The command runs as the owner runs it (a process, answers on its standard input)."""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from bridge.control import init_config_dir, load_control_plane
from bridge.control.provider_entry import NewEntry, with_entry
from bridge.providers.model_listing import ListingError, parse_listing

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 120  # a hang guard only
ANSWER = "Hello there, fine traveller friend"

LLAMA_CPP = {
    "object": "list",
    "data": [
        {"id": "qwen2.5-0.5b-instruct", "object": "model", "owned_by": "llamacpp",
         "meta": {"n_ctx_train": 32768, "n_ctx": 4096}},
    ],
}  # fmt: skip
OLLAMA = {
    "object": "list",
    "data": [
        {"id": "llama3.2:3b", "object": "model", "owned_by": "library"},
        {"id": "qwen2.5:7b", "object": "model", "owned_by": "library"},
    ],
}
VLLM = {"data": [{"id": "meta-llama/Llama-3.1-8B-Instruct", "max_model_len": 131072}]}


@dataclass
class ModelServer:
    url: str
    listing: Any = None
    status: int = 200
    raw: bytes | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    body = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [choice]}  # fmt: skip
    return b"data: " + json.dumps(body).encode() + b"\n\n"


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    state = ModelServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            state.authorizations.append(self.headers.get("Authorization", ""))
            if self.path != "/v1/models":
                self.send_error(404)
                return
            body = state.raw if state.raw is not None else json.dumps(state.listing).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            state.requests.append(json.loads(self.rfile.read(length)))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(_chunk({"role": "assistant", "content": ANSWER}))
            self.wfile.write(_chunk({}, "stop"))
            self.wfile.write(b"data: [DONE]\n\n")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "config"
    init_config_dir(config)
    return config


def _add(config: Path, *argv: str, answers: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bridge", "provider", "add", "--config", str(config), *argv],
        input=answers, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )  # fmt: skip


def test_two_answers_add_a_llama_cpp_server_make_it_the_default_and_test_it(
    model_server: ModelServer, tmp_path: Path
) -> None:
    model_server.listing = LLAMA_CPP
    config = _config(tmp_path)
    before = (config / "providers.yml").read_text(encoding="utf-8")
    # The base URL without /v1, then Enter for the model the server lists first.
    done = _add(config, answers=f"{model_server.url}\n\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the server serves: qwen2.5-0.5b-instruct" in done.stdout
    assert "context window 4096, as the server says" in done.stdout
    assert ANSWER in done.stdout and "done (stop)" in done.stdout
    # provider test sent the model's own name to the server.
    assert [request["model"] for request in model_server.requests] == ["qwen2.5-0.5b-instruct"]
    written = (config / "providers.yml").read_text(encoding="utf-8")
    # The owner's comments and entries are all still there, in order; only default: changed.
    removed = [
        line
        for line in difflib.ndiff(before.splitlines(), written.splitlines())
        if line.startswith("- ")
    ]
    assert removed == ["- default: openai/gpt-4o-mini"]
    plane = load_control_plane(config)
    assert plane.providers.default == "local/qwen2.5-0.5b-instruct"
    provider = plane.providers.providers["local"]
    assert str(provider.api.base_url).rstrip("/") == f"{model_server.url}/v1"
    limits = plane.providers.models["local/qwen2.5-0.5b-instruct"].limits
    assert (limits.context_window, limits.max_output_tokens) == (4096, 1024)
    assert "openai/gpt-4o-mini" in plane.providers.models


def test_an_ollama_model_by_name_with_four_space_indentation_and_the_default_kept(
    model_server: ModelServer, tmp_path: Path
) -> None:
    model_server.listing = OLLAMA
    config = _config(tmp_path)
    four = yaml.safe_dump(
        yaml.safe_load((config / "providers.yml").read_text(encoding="utf-8")), indent=4
    )
    (config / "providers.yml").write_text("# mine\n" + four, encoding="utf-8")
    done = _add(config, "--model", "qwen2.5:7b", "--keep-default", "--no-test",
                answers=f"{model_server.url}/v1\n")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "context window 8192, assumed: the server does not say" in done.stdout
    assert model_server.requests == []
    plane = load_control_plane(config)
    assert plane.providers.default == "openai/gpt-4o-mini"
    assert plane.providers.models["local/qwen2.5:7b"].limits.context_window == 8192
    # A second server on the same port gets the next id.
    again = _add(config, "--url", model_server.url, "--model", "llama3.2:3b", "--no-test")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "local-2/llama3.2:3b" in load_control_plane(config).providers.models


def test_a_key_named_by_variable_is_sent_and_written_as_a_reference(
    model_server: ModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_server.listing = VLLM
    monkeypatch.setenv("VLLM_KEY", "sk-local-vllm-key")
    config = _config(tmp_path)
    done = _add(config, "--url", model_server.url, "--api-key-env", "VLLM_KEY", answers="\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert model_server.authorizations[0] == "Bearer sk-local-vllm-key"
    written = (config / "providers.yml").read_text(encoding="utf-8")
    assert "api_key: ${VLLM_KEY}" in written and "sk-local-vllm-key" not in written
    assert "context window 131072" in done.stdout


def _unchanged_after(config: Path, done: subprocess.CompletedProcess[str], before: str) -> str:
    assert done.returncode == 1, done.stdout + done.stderr
    assert (config / "providers.yml").read_text(encoding="utf-8") == before
    errors = [line for line in done.stdout.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stdout
    return errors[0]


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("nothing listening", "nothing answers at"),
        ("needs a key", "answered HTTP 401 (a key is needed: --api-key-env)"),
        ("not json", "the answer is not JSON"),
        ("endless listing", "sent more than 1048576 bytes"),
        ("no models", "lists no model: load or pull one first"),
        ("unlisted model", "the server does not list the model 'gpt-5'"),
        ("not a url", "is not an http:// or https:// URL with a host"),
        ("no answer", "no answer to 'Base URL of the model server'"),
    ],
)
def test_each_failure_says_why_in_one_line_and_leaves_the_file_alone(
    model_server: ModelServer, tmp_path: Path, case: str, expected: str
) -> None:
    model_server.listing = OLLAMA
    config = _config(tmp_path)
    before = (config / "providers.yml").read_text(encoding="utf-8")
    url, argv = model_server.url, ["--no-test"]
    if case == "nothing listening":
        url = "http://127.0.0.1:9"
    elif case == "needs a key":
        model_server.status = 401
    elif case == "not json":
        model_server.raw = b"<html>hello</html>"
    elif case == "endless listing":
        model_server.raw = b'{"data": [' + b'{"id": "x"},' * 100_000 + b'{"id": "y"}]}'
    elif case == "no models":
        model_server.listing = {"data": []}
    elif case == "unlisted model":
        argv += ["--model", "gpt-5"]
    elif case == "not a url":
        url = "127.0.0.1:11434"
    answers = "" if case == "no answer" else f"{url}\n"
    line = _unchanged_after(config, _add(config, *argv, answers=answers), before)
    assert expected in line


def test_a_stranger_listing_is_bounded_and_odd_entries_are_left_out() -> None:
    body = json.dumps({"data": [
        {"id": "ok", "context_length": 8192}, {"id": ""}, {"id": 5}, "text",
        {"id": "x" * 300}, {"id": "tab\tname"}, {"id": " padded"},
        {"id": "bool", "max_model_len": True}, {"id": "neg", "meta": {"n_ctx": -1}},
    ]}).encode()  # fmt: skip
    listed = parse_listing(body)
    assert [(model.id, model.context_length) for model in listed] == [
        ("ok", 8192), ("bool", None), ("neg", None)
    ]  # fmt: skip
    with pytest.raises(ListingError, match='no "data" list'):
        parse_listing(b'{"models": []}')


def test_an_entry_goes_into_a_flow_style_empty_section_and_quotes_odd_names() -> None:
    text = "schema: 1\ndefault: a/b\nproviders: {}\nmodels: {}\n"
    entry = NewEntry("ollama", "http://127.0.0.1:11434/v1", 'we"ird: name', 2048)
    loaded = yaml.safe_load(with_entry(text, entry, make_default=True, context_said=False))
    assert loaded["default"] == 'ollama/we"ird: name'
    assert loaded["providers"]["ollama"]["api"]["base_url"] == "http://127.0.0.1:11434/v1"
    assert loaded["models"]['ollama/we"ird: name']["limits"] == {
        "context_window": 2048, "max_output_tokens": 512
    }  # fmt: skip


def test_an_invalid_folder_is_not_written_to(model_server: ModelServer, tmp_path: Path) -> None:
    model_server.listing = OLLAMA
    config = _config(tmp_path)
    (config / "providers.yml").write_text("schema: 1\ndefault: x\nproviders: [\n", "utf-8")
    done = _add(config, "--url", model_server.url, "--no-test")
    assert done.returncode == 1
    assert "the configuration in" in done.stdout and "validate` for the full list" in done.stdout
    assert model_server.authorizations == []  # the server was never asked
    assert (config / "providers.yml").read_text("utf-8") == "schema: 1\ndefault: x\nproviders: [\n"
