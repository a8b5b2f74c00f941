"""One verdict on a folder: ``validate``, ``functions validate``, ``serve`` and
``/mineclaw reload`` walk the same corpus of folders and agree on each, valid or not.

Each folder is a fresh ``init`` folder with one owner mistake (or a harmless oddity that must
stay valid). ``serve`` is the real command in its own process (refused: exit 1 without
``listening on``; accepted: it listens and stops on SIGTERM); reload is the in-game command on
a running bridge that started on a good folder.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from bridge.cli import main
from bridge.control import init_config_dir
from tests.storage_choice import apply_chosen_storage

from .conftest import open_app
from .serve_process import start_serve

KEY = "sk-a-real-looking-key-123456"
SERVE_BOUND_S = 120.0


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new))


def _env(folder: Path, text: str) -> None:
    (folder / ".env").write_text(text)
    (folder / ".env").chmod(0o600)


def _skill(folder: Path, body: str, *, crlf: bool = False) -> None:
    text = f"---\nid: extra\nname: Extra\ndescription: an extra skill\n---\n{body}\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    (folder / "workspace" / "skills" / "extra.md").write_bytes(text.encode())


def _function(folder: Path, *, enabled: bool, source: str, capability: str) -> None:
    _append(
        folder / "functions.yml",
        "  - name: extra\n"
        "    description: an extra Function\n"
        f"    enabled: {'true' if enabled else 'false'}\n"
        f"    capabilities: [{capability}]\n"
        "    parameters: {type: object, properties: {}, additionalProperties: false}\n"
        "    on_call: |\n"
        f"      {source}\n",
    )


FINE = "async function onCall(ctx, api) { return {status: 'ok', output: {}}; }"
BROKEN = "async function onCall(ctx, api) { return {status: 'ok' "

Mistake = Callable[[Path], None]
CORPUS: dict[str, tuple[Mistake, bool]] = {
    "fresh": (lambda folder: None, True),
    "skill-saved-with-crlf": (lambda folder: _skill(folder, "Line one.", crlf=True), True),
    "skill-names-a-missing-function": (
        lambda folder: _skill(folder, "Call function:no-such-thing for it."),
        False,
    ),
    "wake-pattern-matches-everything": (
        lambda folder: _append(folder / "config.yml", 'chat:\n  wake_pattern: ".*"\n'),
        False,
    ),
    "misspelt-key-in-use": (
        lambda folder: (
            _replace(folder / "providers.yml", "${OPENAI_API_KEY}", "${OPENAI_APIKEY}"),
            _env(folder, f"OPENAI_API_KEY={KEY}\n"),
        ),
        False,
    ),
    "broken-tool-entry": (
        lambda folder: _replace(folder / "tools.yml", "tools:\n", "tools:\n  broken: {}\n"),
        False,
    ),
    "enabled-function-does-not-compile": (
        lambda folder: _function(
            folder, enabled=True, source=BROKEN, capability="approval.request"
        ),
        False,
    ),
    "disabled-function-does-not-compile": (
        lambda folder: _function(
            folder, enabled=False, source=BROKEN, capability="approval.request"
        ),
        True,
    ),
    "function-calls-a-tool-that-is-not-configured": (
        lambda folder: _function(
            folder, enabled=True, source=FINE, capability="native_tool.call.teleport"
        ),
        False,
    ),
    "decision-model-not-in-providers-yml": (
        lambda folder: _replace(
            folder / "config.yml",
            "  when_refused: keep\n",
            "  when_refused: keep\n  decision_model: a/b\n",
        ),
        False,
    ),
    "title-model-not-in-providers-yml": (
        lambda folder: _replace(folder / "config.yml", "  title_model: null", "  title_model: a/b"),
        False,
    ),
    "unknown-field-in-message-yml": (
        lambda folder: _append(folder / "message.yml", "unknown_field: 1\n"),
        False,
    ),
}


def _folder(root: Path, name: str) -> Path:
    folder = root / name
    init_config_dir(folder)
    apply_chosen_storage(folder)
    CORPUS[name][0](folder)
    return folder


def _cli(*argv: str) -> int:
    return main(list(argv))


async def _serve_accepts(folder: Path) -> bool:
    environ = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    process = await start_serve(folder, env=environ)
    assert process.stdout is not None

    async def first_line() -> bytes:
        assert process.stdout is not None
        return await process.stdout.readline()

    line = await asyncio.wait_for(first_line(), SERVE_BOUND_S)
    listening = line.startswith(b"listening on")
    if listening:
        process.send_signal(signal.SIGTERM)
    _, stderr = await asyncio.wait_for(process.communicate(), SERVE_BOUND_S)
    assert process.returncode == (0 if listening else 1), stderr
    return listening


async def _reload_accepts(root: Path, name: str) -> bool:
    running = root / f"running-{name}"
    app = await open_app(running, None)
    try:
        broken = _folder(root / "corpus-copy", name)
        for item in broken.iterdir():
            if item.name in ("data", ".link-token"):
                continue
            target = running / item.name
            if item.is_dir():
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(item, target)
            else:
                shutil.copy2(item, target)
        # Another line may follow a reload (on PostgreSQL the copied folder names another
        # database: a storage change that waits for a restart).
        lines = await app.command("reload")
        accepted = any("Configuration reloaded" in line for line in lines)
        assert accepted != any("Reload failed" in line for line in lines), lines
        return accepted
    finally:
        await app.runtime.aclose()


@pytest.mark.parametrize("name", sorted(CORPUS))
async def test_validate_functions_validate_serve_and_reload_agree(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("COLUMNS", "240")
    folder = _folder(tmp_path, name)
    expected = CORPUS[name][1]
    verdicts = {
        "validate": _cli("validate", "--config", str(folder)) == 0,
        "functions validate": _cli("functions", "validate", "--config", str(folder)) == 0,
        "serve": await _serve_accepts(folder),
        "/mineclaw reload": await _reload_accepts(tmp_path, name),
    }
    assert verdicts == dict.fromkeys(verdicts, expected)
