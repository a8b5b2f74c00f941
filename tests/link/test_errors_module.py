"""The link's shared errors live apart from the WebSocket server: the tools, approvals and
Functions that catch ``LinkRequestError`` used to import the server module to get it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bridge.errors import LinkError, MineclawError
from bridge.link.codes import ErrorCode
from bridge.link.errors import LinkRequestError


@pytest.mark.parametrize(
    "module",
    [
        "bridge.tools.snapshots",
        "bridge.tools.run_command",
        "bridge.tools.plugin_access",
        "bridge.policy.approvals",
        "bridge.functions.live_host",
    ],
)
def test_catching_a_link_request_error_does_not_load_the_server(module: str) -> None:
    probe = f"import sys, {module}; print('bridge.link.server' in sys.modules)"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "False"


def test_the_error_stays_under_the_one_root() -> None:
    error = LinkRequestError(ErrorCode.TIMEOUT, "no answer")
    assert isinstance(error, LinkError) and isinstance(error, MineclawError)
    assert (error.code, error.message) == (ErrorCode.TIMEOUT, "no answer")


def test_the_test_only_placeholder_handler_is_not_shipped() -> None:
    """Only tests used ``PlaceholderHandler``; it now lives in ``tests/link/placeholder.py``."""
    import bridge.link.handler

    assert not hasattr(bridge.link.handler, "PlaceholderHandler")
