"""``web_search``'s backends: SearXNG (self-hosted, its JSON API), Tavily and Brave Search.

The owner picks one in ``config.yml`` (``web.search``) with its key from ``.env``. The model
controls only the query and how many results (capped); the backend's address is the owner's,
so the search client is not behind the shield (a self-hosted SearXNG usually lives on a private
address). It never takes a proxy from the environment, and the answer is read as a stream up
to ``MAX_ANSWER_BYTES``, all within one deadline (``timeout_s``, for the whole search: httpx's
timeouts are per read, and a backend sending a byte now and then never trips one). Every
answer is checked by a pydantic model; a backend that answers something else is a
``SearchFailed``, not a crash.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError

from bridge.web.connector import shared_context
from bridge.web.errors import SearchFailed

Backend = Literal["searxng", "tavily", "brave"]
MAX_ANSWER_BYTES = 1_000_000
MAX_SNIPPET_CHARS = 500
DEFAULT_URLS: dict[str, str] = {
    "tavily": "https://api.tavily.com/search",
    "brave": "https://api.search.brave.com/res/v1/web/search",
}


@dataclass(frozen=True, slots=True)
class SearchSettings:
    backend: Backend
    url: str
    api_key: str | None = None
    max_results: int = 5
    timeout_s: float = 10.0
    user_agent: str = "Mineclaw-bridge web_search"


@dataclass(frozen=True, slots=True)
class SearchHit:
    title: str
    url: str
    snippet: str


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Item(_Lenient):
    title: str = ""
    url: str
    content: str = ""
    description: str = ""


class _SearxAnswer(_Lenient):
    results: list[Any]
    """Each checked as an ``_Item`` as it is read, up to the hits wanted."""


class _TavilyAnswer(_Lenient):
    results: list[Any]


class _BraveWeb(_Lenient):
    results: list[Any] = []


class _BraveAnswer(_Lenient):
    web: _BraveWeb = _BraveWeb()


class WebSearch:
    """Asks the configured backend. ``transport``: tests hand an httpx transport."""

    def __init__(
        self, settings: SearchSettings, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.settings = settings
        self._transport = transport

    async def search(self, query: str, count: int | None = None) -> list[SearchHit]:
        settings = self.settings
        wanted = max(1, min(count or settings.max_results, settings.max_results))
        request = self._request(query, wanted)
        try:
            async with asyncio.timeout(settings.timeout_s):
                body = await self._answer(request)
        except TimeoutError:
            raise SearchFailed(
                f"the {settings.backend} backend did not answer within {settings.timeout_s:g} s",
                timed_out=True,
            ) from None
        return self._hits(body, wanted)

    async def _answer(self, request: httpx.Request) -> bytes:
        settings = self.settings
        # One TLS context for the process: making one per search loaded the CA bundle on the loop.
        context = await shared_context()
        try:
            async with httpx.AsyncClient(
                transport=self._transport,
                verify=context,
                trust_env=False,
                timeout=settings.timeout_s,
            ) as client:
                async with client.stream(
                    request.method, request.url, headers=request.headers, content=request.content
                ) as response:
                    if response.status_code != 200:
                        raise SearchFailed(
                            f"the {settings.backend} backend answered {response.status_code}"
                        )
                    body = bytearray()
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) > MAX_ANSWER_BYTES:
                            raise SearchFailed(
                                f"the {settings.backend} answer is over {MAX_ANSWER_BYTES} bytes"
                            )
        except httpx.TimeoutException:
            raise SearchFailed(
                f"the {settings.backend} backend did not answer within {settings.timeout_s:g} s",
                timed_out=True,
            ) from None
        except httpx.HTTPError as exc:
            raise SearchFailed(
                f"the {settings.backend} backend could not be asked: {exc}"
            ) from None
        return bytes(body)

    def _request(self, query: str, count: int) -> httpx.Request:
        settings = self.settings
        headers = {"User-Agent": settings.user_agent, "Accept": "application/json"}
        if settings.backend == "searxng":
            url = settings.url.rstrip("/") + "/search"
            params = {"q": query, "format": "json"}
            return httpx.Request("GET", url, params=params, headers=headers)
        if settings.backend == "tavily":
            headers["Authorization"] = f"Bearer {settings.api_key or ''}"
            body = json.dumps({"query": query, "max_results": count}).encode()
            headers["Content-Type"] = "application/json"
            return httpx.Request("POST", settings.url, headers=headers, content=body)
        headers["X-Subscription-Token"] = settings.api_key or ""
        params = {"q": query, "count": str(count)}
        return httpx.Request("GET", settings.url, params=params, headers=headers)

    def _hits(self, body: bytes, wanted: int) -> list[SearchHit]:
        """The first ``wanted`` web links of the answer. Items past them are neither checked
        nor parsed: an answer of a megabyte holds thousands, and each snippet is read by lxml
        on the event loop (all of them took 200 ms of it)."""
        backend = self.settings.backend
        hits: list[SearchHit] = []
        try:
            data: Any = json.loads(body)
            if backend == "searxng":
                items = _SearxAnswer.model_validate(data).results
            elif backend == "tavily":
                items = _TavilyAnswer.model_validate(data).results
            else:
                items = _BraveAnswer.model_validate(data).web.results
            for raw in items:
                if len(hits) >= wanted:
                    break
                item = _Item.model_validate(raw)
                if not item.url.startswith(("http://", "https://")):
                    continue
                snippet = _plain(item.content or item.description)[:MAX_SNIPPET_CHARS]
                hits.append(SearchHit(_plain(item.title)[:200], item.url[:2048], snippet))
        except (ValueError, ValidationError) as exc:
            message = str(exc).splitlines()[0][:200]
            raise SearchFailed(f"the {backend} answer is not search results: {message}") from None
        return hits


def _plain(fragment: str) -> str:
    """A snippet's text: Brave and SearXNG mark matches with tags (``<strong>``); lxml reads
    the fragment so no markup reaches the model."""
    fragment = fragment[: MAX_SNIPPET_CHARS * 8]  # cut before parsing: the snippet is cut anyway
    if "<" not in fragment and "&" not in fragment:
        return " ".join(fragment.split())
    from lxml import html

    try:
        text = html.fragment_fromstring(fragment, create_parent="p").text_content()
    except Exception:  # lxml refuses some fragments; the raw text is still better than nothing
        text = fragment
    return " ".join(str(text).split())
