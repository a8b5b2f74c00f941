"""What the bridge counts for owners: turns, tokens and their estimated cost by player tier and
model, provider failures by class, latencies, the wait line and budget refusals.

Every metric lives in the instance's own registry (never prometheus_client's global one), so
tests and several runtimes of one process do not collide. Label values come from a small set
the bridge controls (outcomes, tiers from ``config.yml``, models from ``providers.yml``,
failure classes); no player name or free text ever becomes a label.

Callers (the turn engine, the chat path, budgets) call the methods below; each is a few
dictionary lookups, safe from the event loop and from worker threads.

A bridge whose ``metrics`` section is off records nothing and never imports
``prometheus_client`` (some 1.5 MB at rest with its registry): each method returns at once
until ``recording`` is on. The endpoint turns it on as it starts (``registry``), before the
link serves anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

NO_TIER = "none"
"""The tier label of a turn that no budget applies to (``budgets`` not configured)."""

TURN_SECONDS_BUCKETS = (0.5, 1, 2, 5, 10, 20, 40, 60, 120, 300)
REQUEST_SECONDS_BUCKETS = (0.25, 0.5, 1, 2, 5, 10, 20, 40, 60, 120)


class ModelPrice(Protocol):
    """Per million tokens (``providers.yml`` ``models.<ref>.price``)."""

    @property
    def input_per_million(self) -> float: ...

    @property
    def output_per_million(self) -> float: ...

    @property
    def cached_input(self) -> float: ...


ModelPrices = Callable[[str], ModelPrice | None]
"""The price of a model by its reference, as configured now (None: no price given)."""


class BridgeMetrics:
    """``prices``: how to price a model's tokens (the plane in force). The wait lines are
    added with `add_queue` (one per server of a network) and read at every scrape.
    ``recording``: whether to record from the start (off: until ``registry`` is first read)."""

    def __init__(self, *, prices: ModelPrices = lambda model: None, recording: bool = True) -> None:
        self._prices = prices
        self._queues: list[Callable[[], int]] = []
        self._audit_losses: Callable[[], tuple[int, int]] = lambda: (0, 0)
        self._registry: CollectorRegistry | None = None
        if recording:
            self.start_recording()

    @property
    def recording(self) -> bool:
        return self._registry is not None

    @property
    def registry(self) -> CollectorRegistry:
        """The metrics' own registry; reading it starts the recording (the endpoint does)."""
        return self.start_recording()

    def start_recording(self) -> CollectorRegistry:
        """Record from now on (what was called before is not counted); idempotent."""
        if self._registry is not None:
            return self._registry
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        registry = CollectorRegistry(auto_describe=True)
        self.turns = Counter(
            "mineclaw_turns",
            "Turns that ended, by outcome (completed, dropped, stopped, ...), lane kind and tier.",
            ["outcome", "lane", "tier"],
            registry=registry,
        )
        self.tokens = Counter(
            "mineclaw_tokens",
            "Tokens of model requests by kind (input, cached_input, output), tier and model;"
            " source says whether the provider reported them or the bridge estimated them,"
            " purpose what the request was for (turn, turn.failed, turn.stopped, compaction).",
            ["kind", "tier", "model", "source", "purpose"],
            registry=registry,
        )
        self.cost = Counter(
            "mineclaw_cost_estimate",
            "Estimated cost of the tokens, from providers.yml prices (models without a price"
            " count nothing), by tier and model.",
            ["tier", "model"],
            registry=registry,
        )
        self.failures = Counter(
            "mineclaw_provider_failures",
            "Failed model request attempts by failure class and model.",
            ["class", "model"],
            registry=registry,
        )
        self.turn_seconds = Histogram(
            "mineclaw_turn_duration_seconds",
            "Wall time of a turn from its start to its end, by outcome.",
            ["outcome"],
            buckets=TURN_SECONDS_BUCKETS,
            registry=registry,
        )
        self.request_seconds = Histogram(
            "mineclaw_model_request_duration_seconds",
            "Wall time of one model request (all its attempts), by model and result.",
            ["model", "result"],
            buckets=REQUEST_SECONDS_BUCKETS,
            registry=registry,
        )
        self.budget_refusals = Counter(
            "mineclaw_budget_refusals",
            "Turns refused or stopped by a token budget, by the budget (the message key) and tier.",
            ["budget", "tier"],
            registry=registry,
        )
        self.web_requests = Counter(
            "mineclaw_web_requests",
            "web_fetch and web_search calls by tool and outcome (ok, refused by the shield,"
            " not_readable, failed).",
            ["tool", "outcome"],
            registry=registry,
        )
        self.decisions = Counter(
            "mineclaw_listen_decisions",
            "Listen-mode lines decided, by who decided (classifier, model, fallback: the"
            " classifier when the model could not) and whether a turn was to start.",
            ["decided_by", "start"],
            registry=registry,
        )
        self.decision_tokens = Counter(
            "mineclaw_listen_decision_tokens",
            "Tokens of listen decision requests by kind (input, output) and model; source says"
            " whether the provider reported them or the bridge estimated them. Counted to the"
            " server's budget, never a player's, and not in mineclaw_tokens.",
            ["kind", "model", "source"],
            registry=registry,
        )
        self.queue = Gauge(
            "mineclaw_queue_length",
            "Wakes waiting in line for a lane or for the cap on running turns.",
            registry=registry,
        )
        self.queue.set_function(lambda: float(sum(length() for length in self._queues)))
        self.audit_dropped = Gauge(
            "mineclaw_audit_dropped_events",
            "Audit events dropped on a full queue since start (each counted in an audit.dropped"
            " record once the table takes rows).",
            registry=registry,
        )
        self.audit_dropped.set_function(lambda: float(self._audit_losses()[0]))
        self.audit_lost = Gauge(
            "mineclaw_audit_lost_events",
            "Audit events the table refused since start (each counted in an audit.lost record"
            " once the table takes rows).",
            registry=registry,
        )
        self.audit_lost.set_function(lambda: float(self._audit_losses()[1]))
        self._registry = registry
        return registry

    def add_queue(self, length: Callable[[], int]) -> None:
        """Count a wait line's length in ``mineclaw_queue_length``."""
        self._queues.append(length)

    def add_audit(self, losses: Callable[[], tuple[int, int]]) -> None:
        """The audit log's (dropped, lost) event counts since start."""
        self._audit_losses = losses

    def price_with(self, prices: ModelPrices) -> None:
        self._prices = prices

    def turn_ended(self, *, outcome: str, lane: str, tier: str, seconds: float) -> None:
        """``lane``: ``public`` or ``private`` (never a lane id: those name players)."""
        if self._registry is None:
            return
        self.turns.labels(outcome, lane, tier).inc()
        self.turn_seconds.labels(outcome).observe(max(0.0, seconds))

    def tokens_used(
        self,
        *,
        tier: str,
        model: str,
        input_tokens: int,
        output_tokens: int,
        cached_input_tokens: int = 0,
        estimated: bool = False,
        purpose: str = "turn",
    ) -> None:
        """One model response's usage. ``input_tokens`` includes the cached ones, as the
        providers report it; they are counted apart here and priced at the cached rate.
        ``purpose``: one of the few fixed words of `bridge.turns.billing`."""
        if self._registry is None:
            return
        source = "estimated" if estimated else "reported"
        cached = min(max(0, cached_input_tokens), max(0, input_tokens))
        fresh = max(0, input_tokens) - cached
        output = max(0, output_tokens)
        for kind, count in (("input", fresh), ("cached_input", cached), ("output", output)):
            if count:
                self.tokens.labels(kind, tier, model, source, purpose).inc(count)
        price = self._prices(model)
        if price is None:
            return
        amount = (
            fresh * price.input_per_million
            + cached * price.cached_input
            + output * price.output_per_million
        ) / 1_000_000
        if amount > 0:
            self.cost.labels(tier, model).inc(amount)

    def provider_failure(self, *, failure_class: str, model: str) -> None:
        if self._registry is None:
            return
        self.failures.labels(failure_class, model).inc()

    def model_request(self, *, model: str, result: str, seconds: float) -> None:
        """``result``: ``ok`` or ``failed`` (every attempt spent)."""
        if self._registry is None:
            return
        self.request_seconds.labels(model, result).observe(max(0.0, seconds))

    def web_request(self, tool: str, outcome: str) -> None:
        """One web tool call ended: ``tool`` web_fetch or web_search, ``outcome`` one of a few
        fixed words (never a URL: URLs go to the audit log, not into labels)."""
        if self._registry is None:
            return
        self.web_requests.labels(tool, outcome).inc()

    def budget_refusal(self, *, budget: str, tier: str) -> None:
        """A turn refused before it started, or stopped between tool rounds, by a budget.
        ``budget``: the refusal's ``message.yml`` key (``budget.player_day``, ...)."""
        if self._registry is None:
            return
        self.budget_refusals.labels(budget, tier).inc()

    def listen_decision(self, *, decided_by: str, started: bool) -> None:
        if self._registry is None:
            return
        self.decisions.labels(decided_by, "yes" if started else "no").inc()

    def listen_decision_tokens(
        self, *, model: str, input_tokens: int, output_tokens: int, estimated: bool
    ) -> None:
        if self._registry is None:
            return
        source = "estimated" if estimated else "reported"
        for kind, count in (("input", input_tokens), ("output", output_tokens)):
            if count > 0:
                self.decision_tokens.labels(kind, model, source).inc(count)
