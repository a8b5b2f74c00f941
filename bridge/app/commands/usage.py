"""``/mineclaw usage [player]``: a player's token use against their limits, and the server's.

Anyone may see their own; another player's needs ``mineclaw.usage.others`` (the console holds
every node). Another player is found by the name they last used the assistant with; their tier
is known only from their own permission facts, so it is shown for the asker alone. The tokens
listen decisions spent are part of the server's and shown beneath it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence

from bridge.app.commands.replies import Replies
from bridge.app.requests.listen_decisions import DECISION_PURPOSE
from bridge.app.wiring.runtime import Runtime
from bridge.control.budgets_config import BudgetsConfig, TokenLimits
from bridge.link.messages import CommandRequest, Text
from bridge.policy.budgets import USAGE_OTHERS, Budgets, UsageLine, periods_at
from bridge.store.usage import SERVER, Totals, UsageLedger
from bridge.turns.billing import EMBEDDING


def _amount(totals: Totals, limit: int | None) -> str:
    shown = f"{totals.tokens} of {limit}" if limit is not None else f"{totals.tokens} (no limit)"
    if totals.estimated:
        shown += f", {totals.estimated} estimated"
    return shown


def _line(who: str, line: UsageLine, *, enforced: bool = True) -> str:
    """``enforced``: whether budgets are on; off, the limits in force bind nothing and are not
    shown ("today 38695 of 20000" read as a budget overrun that refused nothing)."""
    day = line.limits.day_tokens if enforced else None
    month = line.limits.month_tokens if enforced else None
    return (
        f"{who}: today {_amount(line.usage.day, day)}; "
        f"this month {_amount(line.usage.month, month)} tokens"
    )


def usage_lines(
    budgets: Budgets,
    config: BudgetsConfig,
    *,
    asker_uuid: str | None,
    asker_name: str,
    granted: Collection[str],
    target: str | None,
    ledger: UsageLedger | None = None,
) -> list[str]:
    """The report's lines, or one line saying why there is none. Reads the store (blocking).
    ``ledger``: where the server's listen decisions are read from (by their purpose)."""
    lines: list[str] = []
    if target is not None and target.lower() != asker_name.lower():
        if USAGE_OTHERS not in granted:
            return [f"you may not see another player's usage (needs {USAGE_OTHERS})"]
        found = budgets.book.find_player(target)
        if found is None:
            return [f"{target} has not used the assistant"]
        uuid, name = found
        report = budgets.report(player_uuid=uuid, granted=None, config=config)
        lines.append(
            _line(
                f"{name} (tier not known until they ask again)",
                report.player,
                enforced=config.enabled,
            )
        )
    else:
        uuid_or_none = asker_uuid
        report = budgets.report(player_uuid=uuid_or_none or "", granted=granted, config=config)
        if uuid_or_none is not None:
            # The tier only while budgets are on: off, "(guest)" read as the guest's smaller
            # limits and missing tools, which bind nobody then.
            who = f"{asker_name} ({report.tier})" if config.enabled else asker_name
            lines.append(_line(who, report.player, enforced=config.enabled))
    lines.append(_line("server", report.server, enforced=config.enabled))
    if ledger is not None:  # the server's own costs (inside its totals above)
        periods = periods_at(budgets.now(), config.zone())
        spent = ledger.by_purpose(SERVER, periods)
        for purpose, what in (
            (DECISION_PURPOSE, "listen decisions"),
            (EMBEDDING, "memory vectors"),
        ):
            used = spent.get(purpose)
            if used is not None and used.month.tokens:
                lines.append(_line(f"of which {what}", UsageLine(used, TokenLimits())))
    state = "on" if config.enabled else "off (usage is counted, nothing is refused)"
    lines.append(
        f"budgets {state}; the day resets {report.day_resets}, the month {report.month_resets}"
    )
    return lines


async def usage_command(
    runtime: Runtime, request: CommandRequest, args: Sequence[str], replies: Replies
) -> list[Text]:
    if len(args) > 1:
        return replies.usage("usage")
    budgets = runtime.budgets
    if budgets is None:
        return [runtime.text("commands.not_available", {"what": "Usage"})]
    sender = request.sender
    lines = await asyncio.to_thread(
        usage_lines,
        budgets,
        runtime.plane.config.budgets,
        asker_uuid=sender.player.uuid if sender.player else None,
        asker_name=sender.player.name if sender.player else "console",
        granted=frozenset(sender.granted),
        target=args[0] if args else None,
        ledger=runtime.usage,
    )
    return [runtime.text("budgets.usage_line", {"line": line}) for line in lines]
