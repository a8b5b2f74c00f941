"""Turning frame text into a checked ``Frame`` and back, in the decode order of protocol v1.

The order (``docs/protocol.md``, "Decoding a frame") decides which code a frame with several
faults gets, so it must match the Java codec step for step; the shared vectors pin it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from bridge.errors import LinkError
from bridge.link.codes import ErrorCode
from bridge.link.messages import (
    ID_PATTERN,
    MESSAGE_TYPES,
    TYPE_PATTERN,
    Direction,
    Kind,
    WireModel,
    message_type,
)
from bridge.unicode_text import SURROGATE_ESCAPE

MAX_NESTING = 32
"""Arrays and objects nested deeper than this are malformed (the envelope is level 1)."""

MAX_MESSAGE_CHARS = 512
"""The longest ``message`` an error frame may carry."""

_ENVELOPE_FIELDS = frozenset({"v", "id", "type", "re", "data"})
_ID = re.compile(ID_PATTERN.removesuffix("$"))
_TYPE = re.compile(TYPE_PATTERN.removesuffix("$"))


@dataclass(frozen=True, slots=True)
class Frame:
    """A frame that decoded cleanly: its envelope and its validated data."""

    id: str
    type: str
    kind: Kind
    data: WireModel
    re: str | None = None


@dataclass(frozen=True, slots=True)
class DecodeFault:
    """Why a frame did not decode, with what could still be read of it.

    ``frame_id`` is the frame's own id when it was readable (the error frame answering this fault
    carries it as ``re``); ``re`` is the id the frame claimed to answer, when readable.
    """

    code: ErrorCode
    message: str
    frame_id: str | None = None
    re: str | None = None
    type: str | None = None


class _DuplicateKey(ValueError):
    pass


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(f"key {key!r} repeated in one object")
            seen.add(key)
    return obj


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _too_deep(value: Any) -> bool:
    """Whether ``value`` nests arrays and objects more than MAX_NESTING levels."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_NESTING:
            return True
        if isinstance(item, dict):
            stack.extend(
                (child, depth + 1) for child in item.values() if isinstance(child, dict | list)
            )
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item if isinstance(child, dict | list))
    return False


def _has_lone_surrogate(value: Any) -> bool:
    # An escaped surrogate without its pair parses into a string no UTF-8 encoder accepts; it
    # would fail later, when the text is sent on, far from the frame that brought it.
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _clip(message: str) -> str:
    return (
        message if len(message) <= MAX_MESSAGE_CHARS else message[: MAX_MESSAGE_CHARS - 3] + "..."
    )


def _readable_id(value: Any) -> str | None:
    return value if isinstance(value, str) and _ID.fullmatch(value) else None


# Made once: json.loads with hooks would build a new decoder for every frame.
_DECODER = json.JSONDecoder(object_pairs_hook=_refuse_duplicates, parse_constant=_refuse_constant)


def _parse(raw: str | bytes) -> Any | DecodeFault:
    if isinstance(raw, bytes):
        return DecodeFault(ErrorCode.MALFORMED_FRAME, "binary frames are not used; send text")
    try:
        value = _DECODER.decode(raw)
    except json.JSONDecodeError as exc:
        return DecodeFault(
            ErrorCode.MALFORMED_FRAME,
            f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
        )
    except RecursionError:
        return DecodeFault(ErrorCode.MALFORMED_FRAME, f"nested deeper than {MAX_NESTING} levels")
    except ValueError as exc:  # a repeated key, NaN/Infinity, an integer too long to convert
        return DecodeFault(ErrorCode.MALFORMED_FRAME, f"not acceptable JSON: {exc}")
    if SURROGATE_ESCAPE.search(raw) and _has_lone_surrogate(value):
        return DecodeFault(ErrorCode.MALFORMED_FRAME, "a string holds an unpaired surrogate")
    if not isinstance(value, dict):
        return DecodeFault(
            ErrorCode.MALFORMED_FRAME, f"a frame is a JSON object, not {type(value).__name__}"
        )
    # Counting brackets is a cheap upper bound on the depth; walk only when it could be too deep.
    if raw.count("{") + raw.count("[") > MAX_NESTING and _too_deep(value):
        return DecodeFault(ErrorCode.MALFORMED_FRAME, f"nested deeper than {MAX_NESTING} levels")
    return value


def _envelope_fault(obj: dict[str, Any], frame_id: str | None, re_id: str | None) -> str | None:
    if not _ENVELOPE_FIELDS.issuperset(obj):
        unknown = sorted(set(obj) - _ENVELOPE_FIELDS)
        return f"unknown envelope field {unknown[0]!r}"
    for name in ("v", "id", "type", "data"):
        if name not in obj:
            return f"missing envelope field {name!r}"
    if type(obj["v"]) is not int:  # bool is an int subclass; true is not a version
        return "v must be the integer 1"
    if frame_id is None:
        return "id must be 1-64 characters of [A-Za-z0-9_-]"
    if not (isinstance(obj["type"], str) and _TYPE.fullmatch(obj["type"])):
        return "type must match [a-z][a-z0-9_.]{0,63}"
    if "re" in obj and re_id is None:
        return "re must be 1-64 characters of [A-Za-z0-9_-]"
    if not isinstance(obj["data"], dict):
        return "data must be an object"
    return None


def _data_fault(exc: ValidationError) -> str:
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in ("data", *first["loc"]))
    more = exc.error_count() - 1
    return f"{where}: {first['msg']}" + (f" (and {more} more)" if more else "")


def decode_frame(raw: str | bytes, sender: Direction) -> Frame | DecodeFault:
    """Decode one received frame sent by ``sender``; never raises on bad input."""
    parsed = _parse(raw)
    if isinstance(parsed, DecodeFault):
        return parsed
    obj: dict[str, Any] = parsed
    frame_id = _readable_id(obj.get("id"))
    re_id = _readable_id(obj.get("re"))
    version = obj.get("v")
    if type(version) is int and version != 1:
        return DecodeFault(
            ErrorCode.UNSUPPORTED_VERSION,
            f"protocol version {version} is not supported; this side speaks 1",
            frame_id,
            re_id,
        )
    envelope_fault = _envelope_fault(obj, frame_id, re_id)
    if envelope_fault is not None:
        return DecodeFault(ErrorCode.INVALID_ENVELOPE, envelope_fault, frame_id, re_id)
    name: str = obj["type"]
    spec = message_type(sender, name)
    if spec is None:
        other = (
            Direction.BRIDGE_TO_PLUGIN
            if sender is Direction.PLUGIN_TO_BRIDGE
            else Direction.PLUGIN_TO_BRIDGE
        )
        why = (
            "is not sent in this direction"
            if name in MESSAGE_TYPES[other]
            else "is not in protocol v1"
        )
        return DecodeFault(
            ErrorCode.UNKNOWN_TYPE, _clip(f"type {name!r} {why}"), frame_id, re_id, name
        )
    if spec.kind in (Kind.REQUEST, Kind.EVENT) and "re" in obj:
        return DecodeFault(
            ErrorCode.INVALID_ENVELOPE,
            f"re is not allowed on {spec.kind} {name!r}",
            frame_id,
            re_id,
            name,
        )
    if spec.kind is Kind.ANSWER and "re" not in obj:
        return DecodeFault(
            ErrorCode.INVALID_ENVELOPE, f"answer {name!r} needs re", frame_id, None, name
        )
    try:
        data = spec.data.model_validate(obj["data"])
    except ValidationError as exc:
        return DecodeFault(ErrorCode.INVALID_DATA, _clip(_data_fault(exc)), frame_id, re_id, name)
    return Frame(id=obj["id"], type=name, kind=spec.kind, data=data, re=obj.get("re"))


def encode_frame(*, id: str, type: str, data: WireModel, re: str | None = None) -> str:
    """The text of one frame; the caller has chosen a type that matches ``data``.

    The envelope is written by hand around pydantic's own JSON for ``data``: its fields match
    patterns that need no escaping (checked here), and this is the hot path of every verdict.
    """
    if not (_ID.fullmatch(id) and _TYPE.fullmatch(type) and (re is None or _ID.fullmatch(re))):
        raise LinkError(f"envelope field out of its pattern: id={id!r} type={type!r} re={re!r}")
    answers = "" if re is None else f',"re":"{re}"'
    body = data.model_dump_json()
    return f'{{"v":1,"id":"{id}","type":"{type}"{answers},"data":{body}}}'
