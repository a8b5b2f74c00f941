"""The bridge's thread pools, by whose work runs in them.

``asyncio.to_thread`` runs everything in one default pool of a few threads. Work fed by
strangers shares it with the bridge's own: a page's DNS lookup, a player's memory listing, a
history book, an MCP server's answer. When strangers fill it (six hostile pages did, and a
trivial call then waited ten minutes), the bridge's own work waits behind them, and a lease
renewal that waits loses every server. So the bridge's own work has pools of its own that
nothing else is ever put in, and the one stranger-fed blocking call the web tools make, the DNS
lookup of a fetch, has its own too:

- ``LEASES``: the server-lease connection (connect, renew, take, close);
- ``STORE``: the bridge's own writes (the turn archive, its state files, the link token);
- ``BUDGET``: budget accounting (reserve, spend, settle, usage records);
- ``WEB_LOOKUPS``: the name lookups of ``web_fetch`` (a page's links choose the names), and
  the web tools' one load of the CA bundle.

Everything else (work players, pages or MCP servers ask for) stays in the default pool.
Extraction of web pages is in processes of its own (``bridge.web.extraction_pool``). Pools are
made on first use and their threads are named after them (``mineclaw-leases_0``...).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from enum import Enum
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class Pool(Enum):
    """One of the bridge's own pools: its value is ``(name, threads)``."""

    LEASES = ("leases", 4)
    STORE = ("store", 4)
    BUDGET = ("budget", 2)
    WEB_LOOKUPS = ("web-lookups", 4)

    @property
    def threads(self) -> int:
        return self.value[1]


_pools: dict[Pool, ThreadPoolExecutor] = {}
_lock = threading.Lock()


def executor(pool: Pool) -> ThreadPoolExecutor:
    """The thread pool of ``pool``, made on first use."""
    with _lock:
        found = _pools.get(pool)
        if found is None:
            name, threads = pool.value
            found = ThreadPoolExecutor(threads, thread_name_prefix=f"mineclaw-{name}")
            _pools[pool] = found
        return found


async def run_in(pool: Pool, call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``asyncio.to_thread``, in ``pool``'s threads (the caller's context variables kept)."""
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    bound = functools.partial(context.run, call, *args, **kwargs)
    return await loop.run_in_executor(executor(pool), bound)
