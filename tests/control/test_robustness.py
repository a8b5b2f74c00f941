"""Mangled input never escapes as anything but the package's own errors."""

from __future__ import annotations

import random

import pytest
import yaml

from bridge.control import yaml_strict
from bridge.control.config_file import ConfigFile
from bridge.control.envfile import parse_env
from bridge.control.layout import YAML_FILES, default_bytes
from bridge.control.problems import ConfigLoadError
from bridge.control.validation import validate_document
from bridge.policy.whitelist import InvalidCommand, canonicalize

NOISE = b"\x00\t\n\r :-[]{}&*!|>'\"#%@`,?<=~\xef\xbb\xbf\xff\xc3\xa9aZ09."
PARSERS = [yaml.SafeLoader] + ([yaml.CSafeLoader] if hasattr(yaml, "CSafeLoader") else [])


def mangle(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randrange(1, 6)):
        pos = rng.randrange(len(out) + 1)
        operation = rng.randrange(3)
        if operation == 0:
            out[pos:pos] = bytes(rng.choice(NOISE) for _ in range(rng.randrange(1, 4)))
        elif operation == 1:
            del out[pos : pos + rng.randrange(1, 10)]
        else:
            start = rng.randrange(len(out))
            out[pos:pos] = out[start : start + rng.randrange(1, 30)]
    return bytes(out)


@pytest.mark.parametrize("parser", PARSERS, ids=lambda loader: loader.__name__)
def test_mangled_yaml_gives_problems_not_crashes(
    parser: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(yaml_strict, "_PARSER", parser)
    rng = random.Random(1234)
    seeds = [default_bytes(name) for name in YAML_FILES]
    outcomes = {"parsed": 0, "refused": 0}
    for _ in range(200):
        data = mangle(rng, rng.choice(seeds))
        try:
            document = yaml_strict.load_strict_yaml(data, "mangled.yml")
        except ConfigLoadError as exc:
            assert all(p.file == "mangled.yml" for p in exc.problems)
            outcomes["refused"] += 1
            continue
        validate_document(ConfigFile, document, "mangled.yml")
        outcomes["parsed"] += 1
    assert outcomes["parsed"] and outcomes["refused"]


def test_mangled_env_gives_problems_not_crashes() -> None:
    rng = random.Random(99)
    seed = b"# c\nexport A='x y'\nB=\"q\\n\"\nC=plain # note\n"
    for _ in range(400):
        try:
            parse_env(mangle(rng, seed))
        except ConfigLoadError as exc:
            assert all(p.file == ".env" for p in exc.problems)


def test_random_unicode_commands_canonicalize_or_refuse() -> None:
    rng = random.Random(5)
    for _ in range(2000):
        command = "".join(
            chr(rng.choice([rng.randrange(32, 127), rng.randrange(0, 0x3000)]))
            for _ in range(rng.randrange(0, 40))
        )
        try:
            canonical = canonicalize(command)
        except InvalidCommand:
            continue
        assert canonical.isprintable() and "  " not in canonical and "§" not in canonical
        if not canonical.startswith("/"):
            assert canonicalize(canonical) == canonical  # canonical form is a fixed point
