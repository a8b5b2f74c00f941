"""Wiring of the web tools: ``config.yml``'s ``web`` section into the handlers of a version.

The handlers are built per published version (a reload that changes a limit, the shield's
exceptions or the search backend applies to the next call) and only while ``web.enabled`` is
true; otherwise ``tools.yml``'s web entries are catalogued ``not_built`` and offered to nobody,
and the web stack (`bridge.web`'s fetcher, search and extraction pool) is not even imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from bridge.control import ControlPlane
from bridge.errors import ConfigError
from bridge.store.audit_sink import AuditSink
from bridge.tools.registry import HandlerFn

if TYPE_CHECKING:
    from bridge.tools.web_tools import WebOutcome
    from bridge.web.seam import TestNetwork


def web_handlers(
    plane: ControlPlane,
    *,
    audit: AuditSink,
    counted: WebOutcome | None = None,
    network: TestNetwork | None = None,
) -> dict[str, HandlerFn]:
    """``web_fetch`` (and ``web_search`` with a backend), or nothing while ``web`` is off."""
    config = plane.config.web
    if not config.enabled:
        return {}
    # Imported once the section is on: the fetcher's HTTP stack and the extraction pool are
    # memory a bridge with the web tools off never uses (tests/app/test_lazy_imports.py).
    from bridge.tools.web_tools import WebTools
    from bridge.web.fetch import FetchSettings, WebFetcher
    from bridge.web.search import DEFAULT_URLS, SearchSettings, WebSearch
    from bridge.web.shield import ShieldPolicy

    policy = ShieldPolicy(
        allow_ports=frozenset(config.allow_ports),
        allow_private_hosts=tuple(config.allow_private_hosts),
    )
    settings = FetchSettings(
        policy=policy,
        connect_timeout_s=config.connect_timeout_ms / 1000,
        total_timeout_s=config.total_timeout_ms / 1000,
        max_bytes=config.max_bytes,
        max_redirects=config.max_redirects,
        max_chars=config.max_chars,
        proxy=config.proxy,
    )
    if network is None:
        fetcher = WebFetcher(settings)
    else:
        fetcher = WebFetcher(settings, resolver=network.resolve, dialer=network.dial)
    search = None
    chosen = config.search
    if chosen.backend != "none":
        url = chosen.url or DEFAULT_URLS.get(chosen.backend)
        if url is None:  # the config model requires a url for searxng; kept for mypy
            raise ConfigError(f"config.yml: web.search.backend {chosen.backend} needs a url")
        search = WebSearch(
            SearchSettings(
                backend=chosen.backend,
                url=url,
                api_key=chosen.key,
                max_results=chosen.max_results,
                timeout_s=chosen.timeout_ms / 1000,
            )
        )
    tools = WebTools(fetcher, search, audit=audit, redactor=plane.redactor, counted=counted)
    return tools.handlers()


def web_tool_names(handlers: Mapping[str, HandlerFn]) -> list[str]:
    """The web handlers bound in a version, for ``/mineclaw status``."""
    return [name for name in ("web_fetch", "web_search") if name in handlers]
