"""The shared vectors in docs/protocol/vectors/ against the codec, the models and the schema.

The JUnit suite reads the same files; if one of these tests fails, the Python codec, the JSON
Schema and the Java codec may no longer agree on the wire.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError

from bridge.link.auth import compute_mac
from bridge.link.codec import DecodeFault, Frame, decode_frame, encode_frame
from bridge.link.codes import ErrorCode
from bridge.link.messages import MESSAGE_TYPES, Direction

PROTOCOL_DIR = Path(__file__).resolve().parents[2] / "docs" / "protocol"
VECTOR_DIR = PROTOCOL_DIR / "vectors"
VECTORS = sorted(p for p in VECTOR_DIR.glob("*.json") if p.name != "hmac.json")
DECODE_CODES = {
    ErrorCode.MALFORMED_FRAME,
    ErrorCode.UNSUPPORTED_VERSION,
    ErrorCode.INVALID_ENVELOPE,
    ErrorCode.UNKNOWN_TYPE,
    ErrorCode.INVALID_DATA,
}


def _ecma_pattern(
    validator: Any, pattern: str, instance: Any, schema: Any
) -> Iterator[SchemaError]:
    # Python's `$` also matches before a trailing newline; ECMA-262's (the schema's) does not.
    if isinstance(instance, str) and not re.search(re.sub(r"\$$", r"\\Z", pattern), instance):
        yield SchemaError(f"{instance!r} does not match {pattern!r}")


EcmaValidator = jsonschema.validators.extend(Draft202012Validator, {"pattern": _ecma_pattern})
SCHEMA = json.loads((PROTOCOL_DIR / "schema.json").read_text(encoding="utf-8"))
FRAME_DEFS = {
    Direction.PLUGIN_TO_BRIDGE: "PluginToBridgeFrame",
    Direction.BRIDGE_TO_PLUGIN: "BridgeToPluginFrame",
}


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({key for key, _ in pairs}) != len(pairs):
        raise ValueError("repeated key")
    return dict(pairs)


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


def _schema_errors(frame_text: str, direction: Direction) -> list[SchemaError]:
    schema = {**SCHEMA, "$ref": f"#/$defs/{FRAME_DEFS[direction]}"}
    del schema["anyOf"]
    validator = EcmaValidator(schema)
    try:
        # The schema describes one JSON value; repeated keys and NaN are refused before it...
        instance = json.loads(
            frame_text, object_pairs_hook=_refuse_duplicates, parse_constant=_refuse_constant
        )
        # ...and so are unpaired surrogates, which make a string that is not Unicode text.
        json.dumps(instance, ensure_ascii=False).encode("utf-8")
    except (ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        return [SchemaError("not one strict JSON value")]
    return list(validator.iter_errors(instance))


def _load(path: Path) -> dict[str, Any]:
    vector: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return vector


def test_the_schema_is_a_valid_2020_12_schema() -> None:
    Draft202012Validator.check_schema(SCHEMA)


def test_the_vector_folder_is_not_empty_and_well_formed() -> None:
    assert len(VECTORS) > 100
    for path in VECTORS:
        vector = _load(path)
        assert set(vector) == {"description", "direction", "frame", "expect"}, path.name
        assert isinstance(vector["frame"], str), path.name
        Direction(vector["direction"])
        assert vector["expect"] == {"ok": True, "type": vector["expect"].get("type")} or set(
            vector["expect"]
        ) == {"error"}, path.name


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_the_codec_agrees_with_the_vector(path: Path) -> None:
    vector = _load(path)
    result = decode_frame(vector["frame"], Direction(vector["direction"]))
    if "error" in vector["expect"]:
        assert isinstance(result, DecodeFault), f"{path.name} decoded as {result!r}"
        assert result.code == vector["expect"]["error"], result.message
        assert 0 < len(result.message) <= 512
    else:
        assert isinstance(result, Frame), f"{path.name}: {result!r}"
        assert result.type == vector["expect"]["type"]


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_the_schema_agrees_with_the_vector(path: Path) -> None:
    vector = _load(path)
    errors = _schema_errors(vector["frame"], Direction(vector["direction"]))
    if "error" in vector["expect"]:
        assert errors, f"{path.name} is valid against the schema but should be refused"
    else:
        assert errors == [], f"{path.name}: {[e.message for e in errors]}"


def test_every_type_and_every_decode_code_has_a_vector() -> None:
    seen_ok: set[tuple[Direction, str]] = set()
    seen_codes: set[str] = set()
    for path in VECTORS:
        vector = _load(path)
        if "error" in vector["expect"]:
            seen_codes.add(vector["expect"]["error"])
        else:
            seen_ok.add((Direction(vector["direction"]), vector["expect"]["type"]))
    every_type = {(d, name) for d, types in MESSAGE_TYPES.items() for name in types}
    assert every_type - seen_ok == set()
    assert seen_codes == {code.value for code in DECODE_CODES}


def test_the_schema_lists_the_same_types_per_direction_as_the_registry() -> None:
    for direction, def_name in FRAME_DEFS.items():
        rules = SCHEMA["$defs"][def_name]["allOf"]
        listed = set(rules[1]["properties"]["type"]["enum"])
        assert listed == set(MESSAGE_TYPES[direction])


def test_the_hmac_vectors_match_compute_mac() -> None:
    cases = _load(VECTOR_DIR / "hmac.json")["cases"]
    assert len(cases) >= 3
    for case in cases:
        mac = compute_mac(case["token"], case["nonce"], case["instance_id"], case.get("server_id"))
        assert mac == case["mac"]
    assert any("server_id" in case for case in cases)


@pytest.mark.parametrize(
    "path", [p for p in VECTORS if '"ok"' in p.read_text(encoding="utf-8")], ids=lambda p: p.stem
)
def test_a_valid_frame_re_encoded_by_the_models_is_still_valid_and_equal(path: Path) -> None:
    vector = _load(path)
    direction = Direction(vector["direction"])
    decoded = decode_frame(vector["frame"], direction)
    assert isinstance(decoded, Frame)
    text = encode_frame(id=decoded.id, type=decoded.type, data=decoded.data, re=decoded.re)
    assert _schema_errors(text, direction) == []
    assert decode_frame(text, direction) == decoded
    assert json.loads(text) == json.loads(vector["frame"])
