"""The bridge's HTTP clients share one verifying TLS context per trust setting
(`bridge.tls_trust`): httpx would load the whole CA bundle for each client it builds, some
0.8 MB of resident memory apiece (bench/rss_bench.py)."""

from __future__ import annotations

import ssl
from typing import Any

import pytest

from bridge.memory.embeddings import EmbeddingClient, EmbeddingSettings
from bridge.providers.client import ProviderClient
from bridge.tls_trust import context_for, verifying_context

from .provider_support import make_settings


async def test_clients_of_one_trust_setting_load_the_ca_bundle_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loads: list[bool] = []
    load = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loads.append(True)
        load(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    providers = [
        ProviderClient(make_settings("openai_chat_completions", f"https://p{n}.example/v1"))
        for n in range(3)
    ]
    embeddings = [
        EmbeddingClient(EmbeddingSettings(base_url=f"https://e{n}.example/v1", model="m"))
        for n in range(3)
    ]
    try:
        # At most one load for each trust setting (none when an earlier test made them).
        assert len(loads) <= 2
    finally:
        for client in [*providers, *embeddings]:
            await client.aclose()


def test_a_plain_http_client_trusts_nothing_and_an_https_one_verifies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HTTP_PROXY", raising=False)
    monkeypatch.delenv("http_proxy", raising=False)
    monkeypatch.delenv("ALL_PROXY", raising=False)
    monkeypatch.delenv("all_proxy", raising=False)
    monkeypatch.delenv("HTTPS_PROXY", raising=False)
    monkeypatch.delenv("https_proxy", raising=False)
    local = context_for("http://127.0.0.1:8080/v1")
    assert local.verify_mode == ssl.CERT_REQUIRED and local.check_hostname
    assert local.cert_store_stats()["x509_ca"] == 0  # a handshake would fail, not pass
    remote = context_for("https://api.example/v1")
    assert remote is verifying_context() and remote.cert_store_stats()["x509_ca"] > 0
    # A proxy variable may route even a plain URL through TLS: then it verifies.
    monkeypatch.setenv("HTTP_PROXY", "https://proxy.example:3128")
    assert context_for("http://127.0.0.1:8080/v1") is verifying_context()
    assert context_for("http://127.0.0.1:8080/v1", trust_env=False) is local
