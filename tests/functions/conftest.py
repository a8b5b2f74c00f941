from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from bridge.functions.v8_engine import V8Engine


@pytest.fixture(scope="session")
def engine() -> Iterator[V8Engine]:
    """One real V8 engine for the whole session; every invocation still gets a fresh isolate.

    A private loop, not ``asyncio.run``: that would unset the current loop pytest-asyncio left
    behind, which then dies unclosed (a ResourceWarning, an error in this suite).
    """
    loop = asyncio.new_event_loop()
    try:
        started = loop.run_until_complete(V8Engine.start(ahead=2))
        yield started
        loop.run_until_complete(started.aclose())
    finally:
        loop.close()
