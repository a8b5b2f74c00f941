"""What the status page and ``/mineclaw status`` say of each provider: ``reachable``,
``unreachable: <reason>`` (`bridge.providers.probe`) or ``not configured (<why>)``.

A probe's word is kept for a minute per provider and settings (a reload that changes a
provider probes it again), so refreshing the page does not knock on a server each time. Only
those two readers ask: no turn ever waits for a probe. The console reads from its own thread,
the command from the bridge's loop; the lock guards the book only, never a probe.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping

import httpx

from bridge.providers.probe import probe
from bridge.providers.settings import ProviderSettings

PROBE_CACHE_S = 60.0
NO_PROVIDER = "no provider is configured in providers.yml"


class ProviderProbes:
    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._book: dict[str, tuple[ProviderSettings, float, str]] = {}

    def _cached(self, provider_id: str, settings: ProviderSettings) -> str | None:
        with self._lock:
            kept = self._book.get(provider_id)
        if kept is None or kept[0] != settings or self._clock() - kept[1] >= PROBE_CACHE_S:
            return None
        return kept[2]

    async def _probe(
        self,
        provider_id: str,
        settings: ProviderSettings,
        transport: httpx.AsyncBaseTransport | None,
    ) -> str:
        word = self._cached(provider_id, settings)
        if word is None:
            word = await probe(settings, transport=transport)
            with self._lock:
                self._book[provider_id] = (settings, self._clock(), word)
        return word

    async def states(
        self,
        configured: Mapping[str, ProviderSettings],
        missing: Mapping[str, str],
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> list[tuple[str, str]]:
        """(provider id, its word) for every provider, by id; the probes run together.
        ``transport``: the process's provider transport (tests), as the clients have it."""
        ids = sorted(configured)
        words = await asyncio.gather(*(self._probe(pid, configured[pid], transport) for pid in ids))
        states = list(zip(ids, words, strict=True))
        states += [(pid, f"not configured ({why})") for pid, why in missing.items()]
        return sorted(states)
