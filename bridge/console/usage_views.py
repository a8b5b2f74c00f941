"""The usage page: tokens per day for the server (against its daily budget), per purpose, per
model and tier with the estimated cost at today's prices, and for the players who used most,
as plots drawn by the vendored uPlot from ``/usage.json``, and the same numbers as tables. The
Prometheus metrics stay the source for external dashboards; this reads the usage ledger the
budgets count in."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bridge.console.guard import page
from bridge.console.sessions import Session
from bridge.console.state import ConsoleState
from bridge.control.providers import ModelPrice
from bridge.store.usage import SERVER, ModelDay

DAYS = 30
TOP_PLAYERS = 5


def usage_series(state: ConsoleState, now: datetime | None = None) -> dict[str, Any]:
    """The last `DAYS` days (in the budgets' time zone): day keys, the server's tokens, its
    daily budget, tokens per purpose and per top player, each aligned with the days."""
    budgets = state.backend.plane().config.budgets
    today = (now or datetime.now(ZoneInfo(budgets.timezone))).astimezone(ZoneInfo(budgets.timezone))
    days = [(today - timedelta(days=back)).strftime("%Y-%m-%d") for back in range(DAYS - 1, -1, -1)]
    index = {day: i for i, day in enumerate(days)}
    server = [0] * DAYS
    estimated = [0] * DAYS
    players: dict[str, list[int]] = defaultdict(lambda: [0] * DAYS)
    names: dict[str, str] = {}
    for row in state.usage.days_since(days[0]):
        at = index.get(row.day)
        if at is None:
            continue
        if row.holder == SERVER:
            server[at] += row.tokens
            estimated[at] += row.estimated
        else:
            players[row.holder][at] += row.tokens
            names[row.holder] = row.name or row.holder
    purposes: dict[str, list[int]] = defaultdict(lambda: [0] * DAYS)
    for day, purpose, tokens in state.usage.server_purposes_since(days[0]):
        if day in index:
            purposes[purpose][index[day]] += tokens
    top = sorted(players, key=lambda holder: -sum(players[holder]))[:TOP_PLAYERS]
    models: dict[str, list[int]] = defaultdict(lambda: [0] * DAYS)
    tiers: dict[str, list[int]] = defaultdict(lambda: [0] * DAYS)
    cost: dict[str, list[float]] = defaultdict(lambda: [0.0] * DAYS)
    prices = state.backend.plane().providers.models
    for used in state.usage.models_since(days[0]):
        at = index.get(used.day)
        if at is None:
            continue
        models[used.model][at] += used.input_tokens + used.output_tokens
        tiers[used.tier][at] += used.input_tokens + used.output_tokens
        model = prices.get(used.model)
        if model is not None and model.price is not None:
            cost[used.model][at] += _cost(model.price, used)
    return {
        "days": days,
        "server": server,
        "estimated": estimated,
        "budget_day": budgets.server.day_tokens if budgets.enabled else None,
        "purposes": dict(sorted(purposes.items())),
        "players": [{"name": names[holder], "tokens": players[holder]} for holder in top],
        "models": dict(sorted(models.items())),
        "tiers": dict(sorted(tiers.items())),
        "cost": {
            model: [round(x, 6) for x in days_cost] for model, days_cost in sorted(cost.items())
        },
    }


def _cost(price: ModelPrice, used: ModelDay) -> float:
    """The estimate at today's prices (``providers.yml``), as the metrics price a response."""
    cached = min(used.cached_input_tokens, used.input_tokens)
    fresh = used.input_tokens - cached
    return (
        fresh * price.input_per_million
        + cached * price.cached_input
        + used.output_tokens * price.output_per_million
    ) / 1_000_000


def usage_page(state: ConsoleState, request: Request, session: Session) -> Response:
    series = usage_series(state)
    rows = [
        (day, tokens, estimated)
        for day, tokens, estimated in zip(
            series["days"], series["server"], series["estimated"], strict=True
        )
        if tokens
    ]
    totals = [
        (
            name,
            sum(series["models"][name]),
            sum(series["cost"].get(name, ())),
            name in series["cost"],
        )
        for name in series["models"]
    ]
    return state.page(
        request,
        "usage.html",
        session,
        series=series,
        rows=rows[::-1],
        models=totals,
        has_data=plotted(series),
    )


def plotted(series: dict[str, Any]) -> dict[str, bool]:
    """Which plots have something to draw: an empty one says "no data yet" instead of drawing
    empty axes (five empty plots on a fresh server read as a broken page)."""

    def any_of(named: dict[str, list[float]]) -> bool:
        return any(any(values) for values in named.values())

    return {
        "server": any(series["server"]),
        "purposes": any_of(series["purposes"]),
        "models": any_of(series["models"]),
        "tiers": any_of(series["tiers"]),
        "cost": any_of(series["cost"]),
        "players": any(any(player["tokens"]) for player in series["players"]),
    }


def usage_json(state: ConsoleState, request: Request, session: Session) -> Response:
    return JSONResponse(usage_series(state))


ROUTES = [Route("/usage", page(usage_page)), Route("/usage.json", page(usage_json))]
