"""The limits every Function invocation runs under.

`config.yml` carries these as one section; the control plane validates it with this model and
hands the runtime a frozen instance. Every field has a checked range, so a typo cannot turn a
limit off: there is no "unlimited" value.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class FunctionLimits(BaseModel):
    """Per-invocation limits of the Function runtime. Defaults suit a small survival server."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    require_review: bool = False
    """Offer a Function to the model only once its current source hash has a review record
    (`mineclaw-bridge functions review NAME` or the console); a changed file needs one again."""

    source_chars: int = Field(default=65_536, ge=64, le=1_048_576)
    """Largest `on_call` source accepted when the catalogue is loaded."""

    operations_per_call: int = Field(default=32, ge=1, le=1_000)
    """`api.invoke` calls one invocation may make in total, refused ones included."""

    concurrent_operations: int = Field(default=4, ge=1, le=64)
    """`api.invoke` calls that may be in flight at once."""

    pending_approvals: int = Field(default=1, ge=1, le=16)
    """Approval prompts that may be open at once."""

    sync_segment_ms: int = Field(default=200, ge=5, le=10_000)
    """Longest run of JavaScript between two awaits of host work before it is terminated."""

    workflow_ms: int = Field(default=120_000, ge=100, le=3_600_000)
    """Whole invocation wall time, waiting for approvals included."""

    heap_mb: int = Field(default=32, ge=8, le=1_024)
    """V8 heap of one isolate; past it the isolate is terminated (memory bombs)."""

    worker_memory_mb: int = Field(default=256, ge=96, le=4_096)
    """Resident memory of the worker process running the call, polled by the bridge; past it
    the worker is killed (memory V8 allocates outside its heap counts here)."""

    workers: int = Field(default=2, ge=1, le=16)
    """Worker processes kept started while no call runs (plus one spare). A change starts a
    new pool for the next call."""

    max_workers: int = Field(default=8, ge=1, le=64)
    """Calls that may run at once, one worker process each: the pool grows to it on demand
    (a call awaiting an approval holds its worker). Never below `workers`."""

    player_share_percent: int = Field(default=50, ge=1, le=100)
    """The share of `max_workers` one player's calls may hold at once (at least one)."""

    worker_wait_ms: int = Field(default=10_000, ge=100, le=600_000)
    """How long a call waits for a free worker before it ends `workers_busy`."""

    suspend_after_losses: int = Field(default=3, ge=1, le=100)
    """Calls of one Function that ended with their worker killed or crashed, within
    `suspend_minutes`, before the Function is suspended."""

    suspend_minutes: int = Field(default=10, ge=1, le=1_440)
    """How long a suspended Function refuses calls (`function_suspended`); also the window
    its losses are counted in."""

    result_chars: int = Field(default=16_384, ge=64, le=1_048_576)
    """Size of the returned JSON (and of each `api.invoke` input) in characters."""

    result_depth: int = Field(default=16, ge=1, le=64)
    """Nesting depth of the returned JSON (and of each `api.invoke` input)."""

    result_members: int = Field(default=1_024, ge=1, le=100_000)
    """Array items plus object members in the returned JSON (and each `api.invoke` input)."""

    argument_chars: int = Field(default=8_192, ge=2, le=1_048_576)
    """Size of the model's `arguments` JSON for `call_function`."""

    argument_depth: int = Field(default=8, ge=1, le=64)
    """Nesting depth of the model's `arguments`."""

    argument_members: int = Field(default=256, ge=1, le=100_000)
    """Array items plus object members in the model's `arguments`."""
