"""Is a provider reachable? One bounded ``GET {base_url}/models`` with the provider's headers.

Both protocols the bridge speaks (Chat Completions and Responses) are served beside an
OpenAI-style ``/models`` listing, so one probe fits every family: llama.cpp's server,
llama-cpp-python, vLLM, Ollama, LM Studio, OpenRouter, Gemini's OpenAI endpoint and OpenAI
itself answer it. The probe is the status page's and ``/mineclaw status``'s, never a turn's.

The answer is a stranger's: the whole probe has one deadline (a server that trickles bytes
cannot stretch it), the body is read up to a cap, redirects are not followed, and the reason
given back names neither the URL nor the key (the URL of a provider may carry one).
"""

from __future__ import annotations

import asyncio
import socket

import httpx

from bridge.providers.errors import ProviderTransportError
from bridge.providers.headers import HeaderBuilder
from bridge.providers.model_listing import ListingError, parse_listing
from bridge.providers.settings import ProviderSettings
from bridge.tls_trust import context_for

PROBE_TIMEOUT_S = 3.0
PROBE_MAX_BYTES = 1 << 20
REACHABLE = "reachable"


def _refused(exc: httpx.ConnectError) -> str:
    """The cause under the client's "All connection attempts failed", in a few words."""
    seen: BaseException | None = exc
    for _ in range(8):  # the chain is short; a loop in it must not hang the probe
        if seen is None:
            break
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if isinstance(seen, socket.gaierror):
            return "the host name does not resolve"
        seen = seen.__cause__ or seen.__context__
    return "cannot connect"


async def _read(
    settings: ProviderSettings, transport: httpx.AsyncBaseTransport | None, max_bytes: int
) -> str:
    headers = HeaderBuilder(settings).build("probe")
    headers["accept"] = "application/json"
    del headers["content-type"]
    url = settings.base_url.rstrip("/") + "/models"
    body = bytearray()
    # No proxy from the environment (a local server is usually on this machine); the timeout
    # here bounds each step, the caller's deadline the whole probe.
    async with (
        httpx.AsyncClient(
            timeout=PROBE_TIMEOUT_S,
            follow_redirects=False,
            trust_env=False,
            transport=transport,
            verify=context_for(url, trust_env=False),
        ) as client,
        client.stream("GET", url, headers=headers) as response,
    ):
        status = response.status_code
        if status in (401, 403):
            return f"unreachable: HTTP {status} (the key was refused)"
        if status != 200:
            return f"unreachable: HTTP {status} to GET /models"
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > max_bytes:
                # A long listing (OpenRouter's) is still an answer: it opened as JSON does.
                return REACHABLE if body.lstrip()[:1] == b"{" else _not_a_listing()
    try:
        parse_listing(bytes(body))
    except ListingError:
        return _not_a_listing()
    return REACHABLE


def _not_a_listing() -> str:
    return "unreachable: the answer to GET /models is not a model list"


async def probe(
    settings: ProviderSettings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout_s: float = PROBE_TIMEOUT_S,
    max_bytes: int = PROBE_MAX_BYTES,
) -> str:
    """``reachable`` or ``unreachable: <reason>``; never raises for what the server does."""
    try:
        async with asyncio.timeout(timeout_s):
            return await _read(settings, transport, max_bytes)
    except TimeoutError:
        return f"unreachable: no answer within {timeout_s:g} s"
    except httpx.TimeoutException:
        return f"unreachable: no answer within {timeout_s:g} s"
    except httpx.ConnectError as exc:
        return f"unreachable: {_refused(exc)}"
    except httpx.HTTPError as exc:
        return f"unreachable: {type(exc).__name__}"
    except ProviderTransportError as exc:  # a header that cannot be sent; names no value
        return f"unreachable: {exc}"
