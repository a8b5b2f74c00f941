"""Mineclaw bridge: the Python half of an AI agent for Minecraft servers."""

import sys

__version__ = "0.1.0"

# httpx imports its command-line client (`httpx._main`) whenever click and rich are installed,
# and they are (rich draws our own command line's tables): click, rich and pygments, about
# 3 MB of a serving bridge's memory, for a command nobody runs inside the bridge. A `None` in
# sys.modules makes that import fail, and httpx then leaves its `main` a stub. Set before any
# bridge module imports httpx (every one imports this package first).
if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
