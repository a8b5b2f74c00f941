"""What an OpenAI-compatible server says it serves: ``GET {base_url}/models``.

Used by ``mineclaw-bridge provider add`` to fill a providers.yml entry. Servers agree on
``{"data": [{"id": ...}]}``; the context length, where they give it at all, has a field of each
server's own: vLLM ``max_model_len``, llama.cpp's server ``meta.n_ctx`` (or the trained
``meta.n_ctx_train``), LM Studio ``max_context_length``, OpenRouter ``context_length``. Ollama
and LM Studio's OpenAI-compatible listing give none.

The answer is a stranger's until proven otherwise: its size, the number of models and each id
are bounded, and it is never followed to another address.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from bridge.tls_trust import context_for

MAX_BODY_BYTES = 1 << 20
MAX_MODELS = 1000
MAX_ID_CHARS = 256
CONTEXT_FIELDS = ("max_model_len", "context_length", "max_context_length", "context_window")
META_CONTEXT_FIELDS = ("n_ctx", "n_ctx_train")


class ListingError(Exception):
    """Why the server's model list could not be read, in one line for the owner."""


@dataclass(frozen=True, slots=True)
class ListedModel:
    id: str
    context_length: int | None


def _positive_int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 100_000_000:
        return value
    return None


def context_of(entry: Mapping[str, object]) -> int | None:
    """The context length one listing entry states, if it states one."""
    for field in CONTEXT_FIELDS:
        found = _positive_int(entry.get(field))
        if found is not None:
            return found
    meta = entry.get("meta")
    if isinstance(meta, Mapping):
        for field in META_CONTEXT_FIELDS:
            found = _positive_int(meta.get(field))
            if found is not None:
                return found
    return None


def parse_listing(body: bytes) -> list[ListedModel]:
    try:
        document = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise ListingError("the answer is not JSON") from None
    data = document.get("data") if isinstance(document, dict) else None
    if not isinstance(data, list):
        raise ListingError('the answer has no "data" list of models')
    models: list[ListedModel] = []
    for entry in data[:MAX_MODELS]:
        if not isinstance(entry, dict):
            continue
        model_id = entry.get("id")
        if isinstance(model_id, str) and 0 < len(model_id) <= MAX_ID_CHARS:
            if model_id.isprintable() and model_id.strip() == model_id:
                models.append(ListedModel(model_id, context_of(entry)))
    return models


async def list_models(
    base_url: str, api_key: str = "", timeout_s: float = 10.0
) -> list[ListedModel]:
    url = base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    body = bytearray()
    try:
        # No proxy from the environment: the server is usually on this machine.
        async with (
            httpx.AsyncClient(
                timeout=timeout_s,
                follow_redirects=False,
                trust_env=False,
                verify=context_for(url, trust_env=False),
            ) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            if response.status_code != 200:
                hint = " (a key is needed: --api-key-env)" if response.status_code == 401 else ""
                raise ListingError(f"{url} answered HTTP {response.status_code}{hint}")
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_BODY_BYTES:
                    raise ListingError(f"{url} sent more than {MAX_BODY_BYTES} bytes")
    except httpx.ConnectError:
        raise ListingError(f"nothing answers at {url}: is the server running?") from None
    except httpx.TimeoutException:
        raise ListingError(f"{url} did not answer within {timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        raise ListingError(f"{url}: {type(exc).__name__}") from None
    return parse_listing(bytes(body))
