"""A JSON Schema accepted for validation, and validation that is bounded in time.

``SafeSchema.of(schema)`` is the one door: the shape rules (``bridge.schemas.shape``), the
meta-schema of the draft the schema names (2020-12 when it names none), then a validator of the
safe class (``bridge.schemas.keywords``) over the expanded copy, with a registry that retrieves
nothing: no URL is ever opened because of a schema.

``violations`` runs on the calling thread under a deadline; ``checked`` is for the event loop:
a small schema on small arguments is checked in place (microseconds), anything larger on this
module's own two threads (never the loop's default executor), and either way a validation past
``BOUND_S`` ends as ``TookTooLong`` rather than holding anyone.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from bridge.schemas.deadline import TookTooLong, deadline
from bridge.schemas.shape import SchemaRefused, measured_text

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

MAX_CHARS: Final = 65_536
MAX_DEPTH: Final = 32
MAX_SUBSCHEMAS: Final = 1_024
BOUND_S: Final = 2.0
"""The longest one validation may take, wherever it runs."""
INLINE_WORK: Final = 20_000
"""Subschemas times argument characters under which a check runs in place on the loop."""
INLINE_S: Final = 0.005
"""An in-place check that takes longer than this starts again on the validation threads."""

_threads = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="schema-check")


@dataclass(frozen=True, slots=True)
class Violation:
    path: tuple[str | int, ...]
    message: str

    @property
    def where(self) -> str:
        return "/".join(str(part) for part in self.path)


class SafeSchema:
    """A schema that passed the rules, with its bounded validator."""

    def __init__(
        self,
        schema: dict[str, Any],
        validator: Validator | None,
        subschemas: int,
        *,
        compile_later: Callable[[], SafeSchema] | None = None,
    ) -> None:
        """``compile_later``: for a vouched schema, what builds its validator on first use
        (``validator`` is then None and ``subschemas`` is taken from the built one)."""
        self.schema = schema
        self._validator = validator
        self._subschemas = subschemas
        self._compile_later = compile_later

    @property
    def subschemas(self) -> int:
        return self._built()._subschemas

    def _built(self) -> SafeSchema:
        if self._compile_later is not None:
            built = self._compile_later()
            self._validator, self._subschemas = built._validator, built._subschemas
            self._compile_later = None
        return self

    @classmethod
    def of(
        cls,
        schema: Any,
        *,
        max_chars: int = MAX_CHARS,
        max_depth: int = MAX_DEPTH,
        max_subschemas: int = MAX_SUBSCHEMAS,
        vouched: Collection[str] = (),
    ) -> SafeSchema:
        """The schema ready to validate with, or ``SchemaRefused`` naming the first problem.

        ``vouched``: schema texts (``measured_text``) known to pass every rule, the ones the
        bridge ships (a test checks each): such a schema is checked and compiled on its first
        validation, not now, so a bridge with default files imports no jsonschema at start.
        A schema once vouched for stays deferred for later calls without ``vouched``."""
        text = measured_text(schema, max_chars, max_depth)
        key = (text, max_subschemas)
        found = _vouched.get(key)
        if found is not None:
            return found
        if text in vouched:
            found = SafeSchema(
                schema, None, 0, compile_later=lambda: _compiled(text, max_subschemas)
            )
            _vouched[key] = found
            return found
        return _compiled(text, max_subschemas)

    def violations(
        self, instance: Any, *, limit: int = 100, bound_s: float = BOUND_S
    ) -> list[Violation]:
        """At most ``limit`` problems of ``instance``; ``TookTooLong`` past ``bound_s``."""
        return self._run(instance, limit, time.monotonic() + bound_s)

    async def checked(self, instance: Any, *, size: int, limit: int = 100) -> list[Violation]:
        """``violations`` from the event loop, never holding it long. ``size``: the
        arguments' length as JSON text (the work is about subschemas times that)."""
        loop = asyncio.get_running_loop()
        if self._compile_later is not None:
            # A vouched schema's first use imports jsonschema and compiles it (about 0.1 s):
            # on the validation threads, never holding the loop.
            await loop.run_in_executor(_threads, self._built)
        until = time.monotonic() + BOUND_S
        if self.subschemas * max(size, 1) <= INLINE_WORK:
            try:
                return self._run(instance, limit, min(until, time.monotonic() + INLINE_S))
            except TookTooLong:
                pass  # longer than its size said: the rest of the bound, off the loop
        return await loop.run_in_executor(_threads, self._run, instance, limit, until)

    def _run(self, instance: Any, limit: int, until: float) -> list[Violation]:
        validator = self._built()._validator
        assert validator is not None
        before = deadline.at
        deadline.at = until
        try:
            found: list[Violation] = []
            for error in validator.iter_errors(instance):
                found.append(Violation(tuple(error.absolute_path), error.message[:300]))
                if len(found) >= limit:
                    break
            return found
        except RecursionError:
            return [Violation((), "the arguments nest too deeply to check")]
        finally:
            deadline.at = before


_vouched: dict[tuple[str, int], SafeSchema] = {}


def _compiled(text: str, max_subschemas: int) -> SafeSchema:
    # jsonschema (some 3 MB) is imported by the first schema that is not vouched for.
    from bridge.schemas.compiled import compiled

    return compiled(text, max_subschemas)


__all__ = ["SafeSchema", "SchemaRefused", "TookTooLong", "Violation"]
