"""The budget gate in the chat path and /ai: the refusal line, the metric, and the usage report
(the application in process, the provider real HTTP over loopback, the usage ledger real SQLite)."""

from __future__ import annotations

from pathlib import Path

from bridge.store.usage import Periods

from .conftest import STEVE, open_app, write_config
from .scripted_provider import ScriptedProvider

BUDGETS = (
    "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
    "budgets:\n  enabled: true\n  tiers:\n    member: {day_tokens: 500}\n"
)
MEMBER = ["mineclaw.command.chat", "mineclaw.command.private", "mineclaw.budget.member"]


def _refusals(app_metrics: object) -> dict[tuple[str, ...], float]:
    counter = app_metrics.budget_refusals  # type: ignore[attr-defined]
    return {
        tuple(sample.labels.values()): sample.value
        for metric in counter.collect()
        for sample in metric.samples
        if sample.name.endswith("_total")
    }


async def test_a_spent_budget_refuses_chat_and_ai_and_is_counted(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    config = tmp_path / "config"
    write_config(config, provider.port, BUDGETS)
    app = await open_app(config, provider)
    try:
        budgets = app.runtime.budgets
        assert budgets is not None
        now = budgets.now()
        day = Periods(day=now.date().isoformat(), month=now.strftime("%Y-%m"))
        budgets.book.add(
            player_uuid=STEVE.uuid, player_name="Steve", periods=day, tokens=500, estimated=False
        )
        verdict = await app.chat("@ai hello", granted=MEMBER)
        assert verdict.decision == "refuse" and verdict.notice is not None
        assert "You have used your <period> assistant budget" in verdict.notice.template
        assert verdict.notice.values is not None
        assert verdict.notice.values["used"] == "500" and verdict.notice.values["limit"] == "500"
        private = " ".join(await app.command("ai", "hello", granted=MEMBER))
        assert "assistant budget" in private
        assert provider.requests == []
        assert _refusals(app.runtime.metrics) == {("budgets.player_exhausted", "member"): 2.0}
        usage = " ".join(await app.command("usage", granted=MEMBER))
        assert "Steve (member): today 500 of 500" in usage
    finally:
        await app.runtime.aclose()
