"""A YAML reader that accepts only plain JSON-shaped data.

PyYAML's safe loader still expands aliases (billion laughs), applies merge keys, honours
``!!binary``/``!!set``/timestamps and reads YAML 1.1 ``yes``/``no``/``on``/``off`` as booleans.
This reader walks the parser's events itself and refuses all of that, so what reaches the
models is exactly what the owner wrote. Every refusal names the file, line, column and the
field path.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)

from bridge.control.problems import ConfigLoadError, Problem, format_path
from bridge.control.yaml_errors import plain_yaml_error
from bridge.unicode_text import plain_line_ends

PathParts = tuple[str | int, ...]

DEFAULT_MAX_BYTES = 256 * 1024
DEFAULT_MAX_DEPTH = 32
DEFAULT_MAX_NODES = 20_000
MAX_NUMBER_CHARS = 40
MAX_REFUSALS = 50

# libyaml's parser when PyYAML was built with it: the same events, several times faster.
_PARSER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_NULL = re.compile(r"null|Null|NULL|~|")
_TRUE = re.compile(r"true|True|TRUE")
_FALSE = re.compile(r"false|False|FALSE")
_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)")
_FLOAT = re.compile(r"[-+]?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
# Only asked which type YAML 1.1 would give a plain scalar, to refuse it with a precise message.
_implied_tag = cast(Callable[[type, str, tuple[bool, bool]], str], yaml.resolver.Resolver().resolve)


@dataclass(slots=True)
class YamlDocument:
    """A parsed file: its value and where each field path starts (1-based line, column)."""

    value: Any
    marks: dict[PathParts, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: PathParts) -> tuple[int | None, int | None]:
        """The position of ``path`` or of its nearest located ancestor."""
        for end in range(len(path), -1, -1):
            mark = self.marks.get(path[:end])
            if mark is not None:
                return mark
        return None, None


class _Refusal(Exception):
    def __init__(self, message: str, event: Event | None, path: PathParts) -> None:
        super().__init__(message)
        self.message = message
        self.event = event
        self.path = path


def load_strict_yaml(
    data: bytes,
    file: str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_nodes: int = DEFAULT_MAX_NODES,
) -> YamlDocument:
    """Parse ``data`` (UTF-8, one document) or raise ``ConfigLoadError`` with one problem."""
    if len(data) > max_bytes:
        raise ConfigLoadError([Problem(file, None, None, "", f"file is over {max_bytes} bytes")])
    if data.startswith(b"\xef\xbb\xbf"):
        # Windows editors add a UTF-8 byte order mark; it carries no meaning, so it is dropped.
        data = data[3:]
    try:
        text = plain_line_ends(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        bad_line = data[: exc.start].count(b"\n") + 1
        problem = Problem(file, bad_line, None, "", "file is not valid UTF-8")
        raise ConfigLoadError([problem]) from exc
    if "\ufeff" in text:
        bom_line = text[: text.index("\ufeff")].count("\n") + 1
        problem = Problem(file, bom_line, None, "", "byte order mark inside the file")
        raise ConfigLoadError([problem])
    builder = _Builder(max_depth=max_depth, max_nodes=max_nodes)
    try:
        builder.run(yaml.parse(text, Loader=_PARSER))
    except _Refusal as refusal:
        builder.refusals.append(refusal)
    except yaml.MarkedYAMLError as exc:
        plain = plain_yaml_error(exc, text)
        found = [builder.problem(file, refusal) for refusal in builder.refusals]
        problem = Problem(file, plain.line, plain.column, format_path(builder.path), plain.message)
        raise ConfigLoadError([*found, problem]) from None
    except yaml.YAMLError as exc:
        raise ConfigLoadError([Problem(file, None, None, "", f"invalid YAML: {exc}")]) from None
    if builder.refusals:
        # Every refused value of the file at once, so one pass fixes them all.
        raise ConfigLoadError([builder.problem(file, refusal) for refusal in builder.refusals])
    return builder.document


def _position(event: Event | None) -> tuple[int | None, int | None]:
    if event is None or event.start_mark is None:
        return None, None
    return event.start_mark.line + 1, event.start_mark.column + 1


class _Builder:
    """Turns a parser event stream into plain values, refusing anything beyond JSON.

    A refused value (a YAML 1.1 boolean, a tag, a duplicate key...) is recorded and reading goes
    on, so every such fault of the file is reported together; limits on size and shape, which
    say the rest cannot be trusted, stop at once.
    """

    def __init__(self, *, max_depth: int, max_nodes: int) -> None:
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.nodes = 0
        self.path: list[str | int] = []
        self.document = YamlDocument(value=None)
        self.events: Any = None
        self.refusals: list[_Refusal] = []

    def refuse(self, message: str, event: Event | None, path: PathParts) -> None:
        if len(self.refusals) >= MAX_REFUSALS:
            raise _Refusal(f"more than {MAX_REFUSALS} refused values; stopped here", event, path)
        self.refusals.append(_Refusal(message, event, path))

    def problem(self, file: str, refusal: _Refusal) -> Problem:
        line, column = _position(refusal.event)
        if line is None:
            line, column = self.document.locate(refusal.path)
        return Problem(file, line, column, format_path(refusal.path), refusal.message)

    def run(self, events: Any) -> None:
        self.events = iter(events)
        documents = 0
        for event in self.events:
            if isinstance(event, StreamStartEvent | DocumentEndEvent):
                continue
            if isinstance(event, StreamEndEvent):
                break
            if isinstance(event, DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise _Refusal("more than one YAML document", event, ())
                if event.explicit and event.tags:
                    raise _Refusal("%TAG directives are not allowed", event, ())
                continue
            self.document.marks[()] = _mark(event)
            self.document.value = self.node(event)

    def node(self, event: Event) -> Any:
        path = tuple(self.path)
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise _Refusal(f"more than {self.max_nodes} YAML nodes", event, path)
        # Anchors, aliases and tags stop the read: no owner writes them by accident, and an
        # alias flood (billion laughs) must not turn into a flood of problems.
        if isinstance(event, AliasEvent):
            raise _Refusal("aliases (*name) are not allowed", event, path)
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise _Refusal("anchors (&name) are not allowed", event, path)
        tag = getattr(event, "tag", None)
        if tag is not None:
            raise _Refusal(f"explicit tags are not allowed ({tag})", event, path)
        if len(self.path) >= self.max_depth and isinstance(
            event, MappingStartEvent | SequenceStartEvent
        ):
            raise _Refusal(f"nesting deeper than {self.max_depth} levels", event, path)
        if isinstance(event, ScalarEvent):
            return self.scalar(event, path)
        if isinstance(event, SequenceStartEvent):
            return self.sequence()
        if isinstance(event, MappingStartEvent):
            return self.mapping()
        raise _Refusal(f"unexpected YAML event {type(event).__name__}", event, path)

    def sequence(self) -> list[Any]:
        items: list[Any] = []
        for event in self.events:
            if isinstance(event, SequenceEndEvent):
                return items
            self.path.append(len(items))
            self.document.marks[tuple(self.path)] = _mark(event)
            items.append(self.node(event))
            self.path.pop()
        raise _Refusal("unterminated sequence", None, tuple(self.path))

    def mapping(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key_event in self.events:
            if isinstance(key_event, MappingEndEvent):
                return result
            path = tuple(self.path)
            if not isinstance(key_event, ScalarEvent):
                if isinstance(key_event, AliasEvent):
                    raise _Refusal("aliases (*name) are not allowed", key_event, path)
                raise _Refusal("mapping keys must be plain strings", key_event, path)
            key = self.key(key_event, path)
            if key is None or key in result:
                if key is not None:
                    self.refuse(f"duplicate key {key!r}", key_event, (*path, key))
                self.node(next(self.events))  # read past the value, keep the first one
                continue
            self.path.append(key)
            self.document.marks[tuple(self.path)] = _mark(key_event)
            result[key] = self.node(next(self.events))
            self.path.pop()
        raise _Refusal("unterminated mapping", None, tuple(self.path))

    def key(self, event: ScalarEvent, path: PathParts) -> str | None:
        """The key, or ``None`` (refused) when it cannot be one."""
        if event.anchor is not None:
            raise _Refusal("anchors (&name) are not allowed", event, path)
        if event.tag is not None:
            raise _Refusal(f"explicit tags are not allowed ({event.tag})", event, path)
        if not event.style and event.value == "<<":
            self.refuse("merge keys (<<) are not allowed", event, path)
            return None
        value = self.scalar(event, path)
        if not isinstance(value, str):
            self.refuse(f"mapping key {event.value!r} is not a string; quote it", event, path)
            return None
        return value

    def number(self, value: str, event: ScalarEvent, path: PathParts) -> int | float:
        # Python refuses to convert huge digit strings and turns 1e999 into inf; neither is JSON.
        if len(value) > MAX_NUMBER_CHARS:
            self.refuse(f"number longer than {MAX_NUMBER_CHARS} characters", event, path)
            return 0
        if _INT.fullmatch(value):
            return int(value)
        number = float(value)
        if not math.isfinite(number):
            self.refuse("number out of range", event, path)
            return 0
        return number

    def scalar(self, event: ScalarEvent, path: PathParts) -> Any:
        value = event.value
        if event.style:  # quoted or block ("" or None means plain: libyaml vs. Python parser)
            return value  # quoted or block scalar: always a string
        if _NULL.fullmatch(value):
            return None
        if _TRUE.fullmatch(value):
            return True
        if _FALSE.fullmatch(value):
            return False
        if _INT.fullmatch(value) or _FLOAT.fullmatch(value):
            return self.number(value, event, path)
        implied = _implied_tag(yaml.ScalarNode, value, (True, False))
        if implied == "tag:yaml.org,2002:bool":
            self.refuse(
                f"{value!r} is a YAML 1.1 boolean; write true or false, or quote it", event, path
            )
        elif implied != "tag:yaml.org,2002:str":
            kind = implied.rsplit(":", 1)[-1]
            self.refuse(
                f"{value!r} would be read as a YAML {kind}; quote it if it is text", event, path
            )
        return value


def _mark(event: Event) -> tuple[int, int]:
    line, column = _position(event)
    return (line or 0, column or 0)
