"""Suite-wide fixtures."""

from __future__ import annotations

import asyncio
import inspect
import warnings
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _no_idle_current_loop(request: pytest.FixtureRequest) -> Iterator[None]:
    """Before a synchronous test, close the idle loop pytest-asyncio leaves as "current".

    After each async test pytest-asyncio installs a fresh, never-used loop as the current one.
    A synchronous test that calls ``asyncio.run`` (the CLI commands do) unsets the current loop
    at its end, so that fresh loop is dropped unclosed and its ResourceWarning, an error in this
    suite, surfaces in whichever test happens to run the garbage collector.
    """
    if not inspect.iscoroutinefunction(request.function):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                loop: asyncio.AbstractEventLoop | None = (
                    asyncio.get_event_loop_policy().get_event_loop()
                )
            except RuntimeError:
                loop = None
        if loop is not None and not loop.is_running() and not loop.is_closed():
            loop.close()
            asyncio.set_event_loop(None)
    yield
