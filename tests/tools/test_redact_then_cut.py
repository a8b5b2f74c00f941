"""Redact, then cut: no ``read`` offset, no ``grep`` window and no ``grep`` pattern can reach a
secret, whichever position inside it they start at. Every call goes the model's way: the real
control plane (with a header template and ``.env``), the registry and the invoker."""

from __future__ import annotations

import asyncio
import json
import random
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import re2

from bridge.control import ControlPlane, init_config_dir, load_control_plane
from bridge.tools.assembly import invoker_for_player, redactor_for, registry_for
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.registry import CallContext
from bridge.tools.workspace import GREP_CONTEXT_BEFORE, GREP_LINE_CHARS

RNG = random.Random(20261203)


def noise(length: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(length))


# Registered through providers.yml's "Bearer ${GATEWAY_TOKEN}": no built-in rule knows it.
GATEWAY_TOKEN = "gw" + noise(30)
PEM_BODY = "\n".join(noise(64, string.ascii_letters + string.digits + "+/") for _ in range(4))


@dataclass(frozen=True)
class Kind:
    name: str
    text: str  # as it stands in a file
    secret: str  # the part that must never show, not even in part

    @property
    def span(self) -> tuple[int, int]:
        start = self.text.index(self.secret)
        return start, start + len(self.secret)


KINDS = [
    Kind("api key", f"OPENAI_API_KEY=sk-proj-{noise(40)}", ""),
    Kind(
        "pem private key body",
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----",
        PEM_BODY,
    ),
    Kind("password assignment", f"rcon.password = {noise(18)}", ""),
    Kind("url credentials", f"jdbc:postgres://mc{noise(6)}:{noise(16)}@db.internal/world", ""),
    Kind("github token", f"deploy with ghp_{noise(36)} please", ""),
    Kind("aws access key id", f"id AKIA{noise(16, string.ascii_uppercase + string.digits)} ok", ""),
    Kind(
        "aws secret access key",
        f"aws_secret_access_key = {noise(40, string.ascii_letters + string.digits + '/+')}",
        "",
    ),
    Kind("composite header token", f"the gateway refused {GATEWAY_TOKEN} today", GATEWAY_TOKEN),
]


def _with_secret(kind: Kind) -> Kind:
    """Fill in the secret of the kinds above that name it by its place in the text."""
    if kind.secret:
        return kind
    patterns = {
        "api key": r"sk-proj-\w+",
        "password assignment": r"(?<== ).+",
        "url credentials": r"(?<=//)[^@]+",
        "github token": r"ghp_\w+",
        "aws access key id": r"AKIA\w+",
        "aws secret access key": r"(?<== ).+",
    }
    import re

    match = re.search(patterns[kind.name], kind.text)
    assert match is not None
    return Kind(kind.name, kind.text, match.group(0))


KINDS = [_with_secret(kind) for kind in KINDS]


def fragments(secret: str, size: int = 4) -> set[str]:
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


def leaked(secret: str, shown: str) -> set[str]:
    return {piece for piece in fragments(secret) if piece in shown}


@pytest.fixture
def plane(tmp_path: Path) -> ControlPlane:
    config = tmp_path / "config"
    init_config_dir(config)
    providers = config / "providers.yml"
    template = '    extra_headers:\n      X-Gateway-Auth: "Bearer ${GATEWAY_TOKEN}"\n'
    providers.write_text(providers.read_text().replace("    # extra_headers:\n", template))
    (config / ".env").write_text(f"GATEWAY_TOKEN={GATEWAY_TOKEN}\n")
    return load_control_plane(config, environ={})


@pytest.fixture
def invoker(plane: ControlPlane) -> ToolInvoker:
    registry = registry_for(plane)
    granted = frozenset(e.permission for e in registry.catalogue if e.permission)
    return invoker_for_player(
        registry,
        granted,
        cooldowns=Cooldowns(cooldown_ms=0),
        redactor=redactor_for(plane),
        audit=_NoAudit(),
    )


class _NoAudit:
    def record(self, kind: str, fields: dict[str, Any]) -> None:
        pass


def call(invoker: ToolInvoker, tool: str, **arguments: Any) -> dict[str, Any]:
    context = CallContext(turn_id="t", call_id="c", player_uuid="u", player_name="Steve")
    outcome = asyncio.run(invoker.invoke(tool, json.dumps(arguments), context))
    assert outcome.ok, outcome
    result: dict[str, Any] = outcome.result
    return result


def write(plane: ControlPlane, name: str, text: str) -> None:
    (plane.directory / "workspace" / name).write_text(text)


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.name)
def test_a_read_from_any_offset_inside_a_secret_shows_none_of_it(
    plane: ControlPlane, invoker: ToolInvoker, kind: Kind
) -> None:
    before = f"notes for the server\nline {noise(20)}\n"
    write(plane, "notes.txt", before + kind.text + f"\nafter {noise(20)}\n")
    assert not leaked(kind.secret, before + f"\nafter {noise(20)}\n")  # no accidental overlap
    start, end = kind.span
    for offset in range(len(before) + start, len(before) + end):
        text = call(invoker, "read", path="notes.txt", offset=offset)["text"]
        assert not leaked(kind.secret, text), (kind.name, offset, text[:80])


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.name)
def test_a_grep_window_starting_anywhere_inside_a_secret_shows_none_of_it(
    plane: ControlPlane, invoker: ToolInvoker, kind: Kind
) -> None:
    # One long line, so grep shows a window that starts GREP_CONTEXT_BEFORE characters ahead
    # of the match: a pattern chosen to match just there starts the window inside the secret.
    head, tail = noise(300) + " ", " " + noise(400)
    line = head + kind.text.replace("\n", " ") + tail
    secret = kind.secret.replace("\n", " ")
    assert len(line) > GREP_LINE_CHARS
    write(plane, "long.txt", "first line\n" + line + "\n")
    start = len(head) + kind.text.replace("\n", " ").index(secret)
    windows = 0
    for window_start in range(start, start + len(secret)):
        at = window_start + GREP_CONTEXT_BEFORE
        pattern = re2.escape(line[at : at + 12])
        result = call(invoker, "grep", pattern=pattern, path="long.txt")
        for match in result["matches"]:
            windows += 1
            assert not leaked(secret, match["text"]), (kind.name, window_start, match["text"])
    assert windows > 0  # some patterns fell in the text after the secret and did match


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.name)
def test_grep_cannot_test_a_guess_at_a_secret(
    plane: ControlPlane, invoker: ToolInvoker, kind: Kind
) -> None:
    write(plane, "keys.txt", f"keys below\n{kind.text}\nend\n")
    secret = kind.secret.split("\n")[0]
    right = [secret, secret[:10], secret[-10:], secret[3:13]]
    wrong = ["".join(reversed(guess)) for guess in right]
    answers = {
        guess: len(call(invoker, "grep", pattern=re2.escape(guess), path="keys.txt")["matches"])
        for guess in right + wrong
    }
    assert set(answers.values()) == {0}, answers
    # The file is still searched: the text around the secret is found as usual.
    assert len(call(invoker, "grep", pattern="keys below", path="keys.txt")["matches"]) == 1


def test_a_read_cut_at_the_scan_limit_does_not_end_in_half_a_secret(
    plane: ControlPlane, invoker: ToolInvoker
) -> None:
    from bridge.tools import workspace as module

    key = f"sk-proj-{noise(40)}"
    for cut in (5, 12, 30):
        filler = "x" * 100 + "\n"
        text = filler * ((module.MAX_SCAN_BYTES - cut) // len(filler))
        text += "y" * (module.MAX_SCAN_BYTES - cut - len(text)) + key + "\nmore\n"
        write(plane, "big.txt", text)
        result = call(invoker, "read", path="big.txt", offset=module.MAX_SCAN_BYTES - 400)
        assert result["truncated"] is True
        assert not leaked(key, result["text"]), (cut, result["text"][-40:])
