"""Which tools a guest may use: none that costs money or changes the world, unless the owner
allows that tool for guests by name (``budgets.guest.allow_tools``).

A tool costs money when ``tools.yml`` marks it ``cost: paid``; it has side effects when its
built-in dispatches commands or runs Functions (a Function may do either), or it is an MCP
server's tool. The tool layer asks
this twice: when it builds the catalogue the model is offered, and again when a call arrives,
so a tool a guest was never offered cannot be called by naming it.
"""

from __future__ import annotations

from bridge.control.budgets_config import GuestConfig

SIDE_EFFECT_HANDLERS = frozenset({"run_command", "call_function", "mcp"})
"""An MCP server's tool counts as one: what it does is its owner's code, not ours."""
NEVER_FOR_GUESTS = frozenset({"web_fetch", "web_search"})
"""The web tools reach outside the server on the model's word: no guest gets them, whatever
``allow_tools`` says (a guest is anyone, and a fetched page is untrusted text in their turn)."""


def guest_may_use(name: str, *, handler: str, cost: str, guest: GuestConfig) -> bool:
    if handler in NEVER_FOR_GUESTS:
        return False
    if name in guest.allow_tools:
        return True
    return cost != "paid" and handler not in SIDE_EFFECT_HANDLERS
