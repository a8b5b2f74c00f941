"""The root of every error the bridge raises on purpose.

Each subpackage translates the errors of the libraries it uses at its boundary
(``raise ProviderError(...) from exc``), so callers catch one tree::

    MineclawError
    ├── LinkError            bridge.link: frames, handshake, the WebSocket server
    │   └── LinkRequestError   bridge.link.errors: a request the plugin did not answer
    ├── ConfigError          bridge.control: YAML files, validation, reload
    ├── ProviderError        bridge.providers: HTTP, SSE, provider error bodies
    ├── ToolError            bridge.tools / bridge.policy: arguments, gating, whitelist
    ├── FunctionError        bridge.functions: the JavaScript sandbox and its limits
    ├── TurnError            bridge.turns: gates, cancellation, dropped turns
    ├── StoreError           bridge.store: archive, audit log, usage (SQLite or PostgreSQL)
    └── WebError             bridge.web: the SSRF shield, fetches and search backends

Subpackages derive their own, more precise classes from these branches.
"""

from __future__ import annotations


class MineclawError(Exception):
    """Base class of every error the bridge raises on purpose."""


class LinkError(MineclawError):
    """A fault on the plugin link: a bad frame, a failed handshake, a closed socket."""


class ConfigError(MineclawError):
    """The control plane could not be loaded or published."""


class ProviderError(MineclawError):
    """A model provider request failed."""


class ToolError(MineclawError):
    """A tool call was refused or failed."""


class FunctionError(MineclawError):
    """A Function could not be loaded, was refused, or failed in the sandbox."""


class TurnError(MineclawError):
    """A turn could not start or was dropped."""


class StoreError(MineclawError):
    """The archive or the audit log could not be read or written."""


class WebError(MineclawError):
    """A web fetch or search was refused (by the shield) or failed."""
