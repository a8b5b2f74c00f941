"""The budget tiers as ``validate`` shows them: each tier with its permission node and limits,
then guests and the whole server, so an owner sees who gets what before a player asks."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from bridge.control.budgets_config import BudgetsConfig, TokenLimits
from bridge.policy.budgets import tier_node


def _tokens(limit: int | None) -> str:
    return "no limit" if limit is None else f"{limit:,}"


def budget_table(config: BudgetsConfig) -> Table:
    state = "on" if config.enabled else "off: usage is counted, nothing is refused"
    table = Table(title=f"Token budgets ({state}; days and months in {escape(config.timezone)})")
    for column in ("tier", "permission node", "per day", "per month", "notes"):
        table.add_column(column)
    rows: list[tuple[str, str, TokenLimits, str]] = []
    for position, (name, limits) in enumerate(config.tiers.items(), start=1):
        note = "checked first" if position == 1 and len(config.tiers) > 1 else ""
        rows.append((name, tier_node(name), limits, note))
    guest = config.guest
    allowed = ", ".join(guest.allow_tools) or "none"
    guest_note = (
        f"output cap {guest.max_output_tokens} tokens, at most {guest.max_tool_rounds} tool"
        f" rounds; paid or side-effect tools allowed: {allowed}"
    )
    rows.append(("guest", "(none of the above)", guest, guest_note))
    rows.append(("server", "(every player together)", config.server, ""))
    for name, node, limits, note in rows:
        table.add_row(
            escape(name),
            escape(node),
            _tokens(limits.day_tokens),
            _tokens(limits.month_tokens),
            escape(note),
        )
    return table
