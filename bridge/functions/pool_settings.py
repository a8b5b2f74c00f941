"""The sizes of the Function worker pool (`PoolSettings`) and what ``config.yml`` asks for
(`pool_settings`), apart from the pool itself (`bridge.functions.worker_pool`): the served
configuration reads them at start, while the pool and its worker processes are imported by the
first Function call (`bridge.functions.live_pool`)."""

from __future__ import annotations

from dataclasses import dataclass

from bridge.control.function_limits import FunctionLimits


@dataclass(frozen=True)
class WorkerLimits:
    """OS limits a worker sets on itself at start (see `worker_main`)."""

    data_mb: int = 1_024
    cpu_s: int = 600


@dataclass(frozen=True)
class PoolSettings:
    """`workers`: processes kept started while idle; `max_workers`: calls at once (one process
    each), the pool grows to it on demand; `spare`: processes kept started beyond the calls
    running; `tenant_share`: calls one player may run at once; `wait_s`: how long a call waits
    for a worker before it ends `workers_busy`; `limits`: the OS limits each worker sets on
    itself."""

    workers: int = 2
    spare: int = 1
    max_workers: int = 8
    tenant_share: int = 4
    wait_s: float = 10.0
    trim_after_s: float = 10.0
    limits: WorkerLimits = WorkerLimits()

    @property
    def cap(self) -> int:
        return max(self.workers, self.max_workers)

    @property
    def share(self) -> int:
        return max(1, min(self.tenant_share, self.cap))


def pool_settings(limits: FunctionLimits) -> PoolSettings:
    """The pool `config.yml`'s `functions` section asks for. The data limit is a floor under
    the bridge's resident-memory watch, with room for what V8 reserves (see `worker_main`)."""
    data_mb = max(WorkerLimits().data_mb, 2 * limits.worker_memory_mb)
    cap = max(limits.workers, limits.max_workers)
    return PoolSettings(
        workers=limits.workers,
        max_workers=cap,
        tenant_share=max(1, cap * limits.player_share_percent // 100),
        wait_s=limits.worker_wait_ms / 1000,
        limits=WorkerLimits(data_mb=data_mb),
    )
