"""A dry run of one Function in the real sandbox: `mineclaw-bridge functions run` and the
console's dry-run form give the same result, because both call `dry_run`.

Nothing is performed: dispatches and native calls are recorded by `DryRunHost`, approvals are
answered as asked. A disabled Function runs anyway (a dry run is how an owner tries it before
enabling it), and so does an unreviewed one (it is how it gets reviewed).
"""

from __future__ import annotations

from typing import Any, Literal

from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionsFile
from bridge.functions.host import DryRunHost
from bridge.functions.runtime import FunctionOutcome, FunctionRuntime
from bridge.functions.worker_pool import PoolSettings, WorkerEngine, pool_settings
from bridge.store.audit_sink import MemoryAudit

Approve = Literal["yes", "no", "timeout"]


def enabled_for_dry_run(catalogue: FunctionsFile, name: str) -> FunctionsFile:
    """The catalogue with ``name`` enabled (unchanged when it is, or does not exist)."""
    spec = catalogue.get(name)
    if spec is None or spec.enabled:
        return catalogue
    enabled = spec.model_copy(update={"enabled": True})
    others = [f for f in catalogue.functions if f.name != spec.name]
    return catalogue.model_copy(update={"functions": [*others, enabled]})


async def dry_run(
    catalogue: FunctionsFile,
    limits: FunctionLimits,
    name: str,
    arguments: Any,
    player: str,
    *,
    approve: Approve = "yes",
    known_tools: frozenset[str] | None = None,
) -> FunctionOutcome:
    """Run ``name`` as ``player`` with nothing performed. Raises `SandboxError` when no
    worker could start."""
    host = DryRunHost(approve=approve, tools=known_tools)
    # The same worker processes and limits as the bridge; one worker is enough for one call.
    settings = pool_settings(limits)
    engine = await WorkerEngine.start(PoolSettings(workers=1, spare=0, limits=settings.limits))
    try:
        runtime = FunctionRuntime(
            catalogue=enabled_for_dry_run(catalogue, name),
            limits=limits,
            engine=engine,
            host=host,
            audit=MemoryAudit(),
        )
        return await runtime.invoke(name, arguments, player=player)
    finally:
        await engine.aclose()
