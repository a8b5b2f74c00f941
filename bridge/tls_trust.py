"""One verifying TLS context per process for the bridge's HTTP clients of the same trust
settings (the model providers, the embeddings endpoint, the model listing and probe).

httpx makes a context for each client it builds, and each loads the whole CA bundle: about
0.8 MB of resident memory and some 25 ms of CPU per client (a provider client per model route,
another per event loop a Function's tools run on, one per reload that changes providers). An
``SSLContext`` is safe to share between clients, threads and event loops once made.
``trust_env`` (``SSL_CERT_FILE``/``SSL_CERT_DIR`` and the proxy variables honoured or not) is
the one setting the clients differ in, so there is a context for each of its values.

A client of a plain ``http://`` URL that no proxy variable reroutes never makes a TLS
handshake (redirects are not followed): it gets ``context_for``'s context that trusts nothing,
so a local model server does not cost the CA bundle, and a handshake it should never make
would fail rather than pass unverified.
"""

from __future__ import annotations

import ssl
import threading
import urllib.request

import httpx

_contexts: dict[bool, ssl.SSLContext] = {}
_trusting_nothing: ssl.SSLContext | None = None
_lock = threading.Lock()


def verifying_context(*, trust_env: bool = True) -> ssl.SSLContext:
    """httpx's default verifying context for ``trust_env``, made once per process."""
    with _lock:
        context = _contexts.get(trust_env)
        if context is None:
            context = _contexts[trust_env] = httpx.create_ssl_context(trust_env=trust_env)
        return context


def context_for(url: str, *, trust_env: bool = True) -> ssl.SSLContext:
    """The context a client of ``url`` needs: the shared verifying one, unless ``url`` is
    plain http and (with ``trust_env``) no proxy variable is set."""
    if url.lower().startswith("https:") or (trust_env and urllib.request.getproxies()):
        return verifying_context(trust_env=trust_env)
    global _trusting_nothing
    with _lock:
        if _trusting_nothing is None:
            # Hostname checked, certificate required, no certificate trusted: fails closed.
            _trusting_nothing = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        return _trusting_nothing
