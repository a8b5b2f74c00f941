"""The Function reviews table on both backends: the history of accepted sources."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.storage_backends import Backend


def test_reviews_keep_every_source_and_the_latest_wins(backend: Backend) -> None:
    with backend.target.open_reviews() as reviews:
        assert reviews.latest("kit") is None
        reviews.record("kit", "v1", "a" * 64, "ann", at=datetime(2026, 12, 1, tzinfo=UTC))
        reviews.record("kit", "v2", "b" * 64, " bob ", at=datetime(2026, 12, 2, tzinfo=UTC))
        latest = reviews.latest("kit")
        assert latest is not None
        assert (latest.source, latest.source_sha256, latest.reviewer) == ("v2", "b" * 64, "bob")
        assert reviews.reviewed() == {("kit", "a" * 64), ("kit", "b" * 64)}
    with backend.target.open_reviews() as again:  # stored, not held in memory
        assert again.reviewed() == {("kit", "a" * 64), ("kit", "b" * 64)}
