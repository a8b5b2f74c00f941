"""Read what `__mineclaw.step()` reports without parsing more than an honest driver can say.

The report comes from the sandbox, so owner code can forge it (a `toJSON` on a prototype
rewrites what the driver's `stringify` writes). Its length is bounded by the worker, but within
that length a forged report can list ~15,000 requests; parsing all of them (json or pydantic)
holds the GIL for milliseconds on the pool thread, and the bridge's event loop waits that long.
This reader walks the report's one shape itself: the top-level object and the `requests` array
are read one value at a time and refused as soon as they hold more than an honest driver
writes, so a forged report costs the first few items, not all of them. Only scalars (and the
small `failure` object, whose members are scalars) are handed to the C decoder.
"""

from __future__ import annotations

import json
import re
from typing import Any

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
_SCALAR_START = frozenset('"-0123456789tfn')
# Members an honest driver writes in the report, and in its `failure` object.
_REPORT_KEYS = frozenset({"pending", "requests", "dropped", "done", "result", "failure"})
_FAILURE_KEYS = frozenset({"code", "message"})
_REQUEST_FIELDS = 3


class ReportError(ValueError):
    """The report is not what an honest driver writes."""


class TooManyRequests(ReportError):
    """The report lists more requests than the driver may still post."""


def read_report(text: str, max_requests: int) -> dict[str, Any]:
    """The report as a dict (for the model to check), or `ReportError` once it holds more
    than `max_requests` requests, a member the driver never writes, or anything nested
    deeper than its shape."""
    reader = _Reader(text)
    value = reader.object(_REPORT_KEYS, lambda key: _member(reader, key, max_requests))
    reader.end()
    return value


def _member(reader: _Reader, key: str, max_requests: int) -> Any:
    if key == "requests":
        request = lambda: reader.array(_REQUEST_FIELDS, reader.scalar)  # noqa: E731
        return reader.array(max_requests, request, too_many=TooManyRequests)
    if key == "failure" and reader.peek() == "{":
        return reader.object(_FAILURE_KEYS, lambda _key: reader.scalar())
    return reader.scalar()


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def peek(self) -> str:
        self.at = _SPACE.match(self.text, self.at).end()  # type: ignore[union-attr]
        return self.text[self.at : self.at + 1]

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise ReportError(f"expected {char!r} at {self.at}")
        self.at += 1

    def scalar(self) -> Any:
        if self.peek() not in _SCALAR_START:  # the empty peek at the end is not in it
            raise ReportError(f"expected a string, number, boolean or null at {self.at}")
        try:
            value, self.at = _DECODER.raw_decode(self.text, self.at)
        except ValueError as exc:
            raise ReportError(str(exc)) from None
        return value

    def array(self, most: int, item: Any, too_many: type[ReportError] = ReportError) -> list[Any]:
        self.expect("[")
        values: list[Any] = []
        if self.peek() == "]":
            self.at += 1
            return values
        while True:
            if len(values) == most:
                raise too_many(f"more than {most} items at {self.at}")
            values.append(item())
            if self.peek() == "]":
                self.at += 1
                return values
            self.expect(",")

    def object(self, keys: frozenset[str], member: Any) -> dict[str, Any]:
        self.expect("{")
        values: dict[str, Any] = {}
        if self.peek() == "}":
            self.at += 1
            return values
        while True:
            if self.peek() != '"':
                raise ReportError(f"expected a member name at {self.at}")
            key = self.scalar()
            if key not in keys or key in values:
                raise ReportError(f"unexpected or repeated member {str(key)[:40]!r}")
            self.expect(":")
            values[key] = member(key)
            if self.peek() == "}":
                self.at += 1
                return values
            self.expect(",")

    def end(self) -> None:
        if self.peek():
            raise ReportError(f"text after the report at {self.at}")
