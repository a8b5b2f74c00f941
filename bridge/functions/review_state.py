"""Review as a state: with ``functions.require_review: true`` a Function is offered to the
model (and may be called) only when its current source hash has a review record.

`ReviewBook` holds the (name, hash) pairs reviewed so far, read from the store
(`bridge.store.reviews`) when the bridge starts and on every reload, and added to at once when
the owner reviews in the console. A Function whose file changed has a new hash, so it goes back
to "needs review" by itself: nothing has to clear the old review.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionsFile, FunctionSpec
from bridge.store.audit_sink import AuditSink
from bridge.store.reviews import FunctionReviews, Review

REVIEWED = "reviewed"
NEEDS_REVIEW = "needs review"
NOT_REQUIRED = "not required"


class ReviewBook:
    """The reviewed (name, hash) pairs. ``reviews``: the store (None: nothing is ever
    reviewed, which only matters when ``require_review`` is on)."""

    def __init__(self, reviews: FunctionReviews | None = None) -> None:
        self._reviews = reviews
        self._lock = threading.Lock()
        self._pairs: frozenset[tuple[str, str]] = frozenset()
        self.refresh()

    @property
    def store(self) -> FunctionReviews | None:
        return self._reviews

    def refresh(self) -> None:
        """Read the pairs again (blocking: run off the event loop). Raises `ReviewError`."""
        if self._reviews is None:
            return
        pairs = self._reviews.reviewed()
        with self._lock:
            self._pairs = pairs

    def is_reviewed(self, spec: FunctionSpec) -> bool:
        return (spec.name, spec.source_sha256) in self._pairs

    def has(self, name: str, sha256: str) -> bool:
        """Whether ``name`` has a review of exactly the text hashed to ``sha256`` (an MCP
        tool's description and schema, ``mcp.require_review``, share this state)."""
        return (name, sha256) in self._pairs

    def state(self, spec: FunctionSpec, limits: FunctionLimits) -> str:
        if self.is_reviewed(spec):
            return REVIEWED
        return NEEDS_REVIEW if limits.require_review else NOT_REQUIRED

    def may_offer(self, spec: FunctionSpec, limits: FunctionLimits) -> bool:
        """Enabled, and reviewed when reviews are required."""
        return spec.enabled and (not limits.require_review or self.is_reviewed(spec))

    def offered(self, catalogue: FunctionsFile, limits: FunctionLimits) -> list[FunctionSpec]:
        return [spec for spec in catalogue.functions if self.may_offer(spec, limits)]

    def close(self) -> None:
        if self._reviews is not None:
            self._reviews.close()

    def accept(self, spec: FunctionSpec, reviewer: str) -> Review:
        """Record that ``reviewer`` accepted ``spec``'s current source. Raises `ReviewError`."""
        if self._reviews is None:
            raise RuntimeError("no review store")  # the wiring always gives one when serving
        review = self._reviews.record(spec.name, spec.on_call, spec.source_sha256, reviewer)
        with self._lock:
            self._pairs = self._pairs | {(spec.name, spec.source_sha256)}
        return review


@dataclass(frozen=True, slots=True)
class ReviewDiff:
    """What the owner reads before accepting: the diff of the current source against the last
    reviewed one (every line added when there was none)."""

    last: Review | None
    lines: tuple[str, ...]


def review_diff(spec: FunctionSpec, last: Review | None) -> ReviewDiff:
    before: Iterable[str] = () if last is None else last.source.splitlines()
    label = "(never reviewed)" if last is None else f"reviewed {last.source_sha256[:12]}"
    lines = difflib.unified_diff(
        list(before),
        spec.on_call.splitlines(),
        fromfile=label,
        tofile=f"current {spec.source_sha256[:12]}",
        lineterm="",
    )
    return ReviewDiff(last, tuple(lines))


def accept_review(
    book: ReviewBook, audit: AuditSink, spec: FunctionSpec, reviewer: str, *, via: str
) -> Review:
    """Record the review of ``spec``'s current source and audit it (``function.reviewed``:
    who, through what, the hash accepted and the one reviewed before). Raises `ReviewError`."""
    store = book.store
    previous = None if store is None else store.latest(spec.name)
    review = book.accept(spec, reviewer)
    audit.record(
        "function.reviewed",
        {
            "function": spec.name,
            "source_sha256": spec.source_sha256,
            "previous_sha256": None if previous is None else previous.source_sha256,
            "reviewer": review.reviewer,
            "via": via,
        },
    )
    return review
