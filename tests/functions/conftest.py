from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from bridge.functions.pool_settings import PoolSettings
from bridge.functions.worker_pool import WorkerEngine


@pytest.fixture(scope="session")
def engine() -> Iterator[WorkerEngine]:
    """One real worker pool for the whole session; every invocation still gets a fresh isolate.

    A private loop, not ``asyncio.run``: that would unset the current loop pytest-asyncio left
    behind, which then dies unclosed (a ResourceWarning, an error in this suite).
    """
    loop = asyncio.new_event_loop()
    try:
        started = loop.run_until_complete(WorkerEngine.start(PoolSettings(workers=2)))
        yield started
        loop.run_until_complete(started.aclose())
    finally:
        loop.close()
