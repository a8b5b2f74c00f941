from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from bridge.functions.v8_engine import V8Engine


@pytest.fixture(scope="session")
def engine() -> Iterator[V8Engine]:
    """One real V8 engine for the whole session; every invocation still gets a fresh isolate."""
    started = asyncio.run(V8Engine.start(ahead=2))
    yield started
    asyncio.run(started.aclose())
