"""A dry run of one Function in the real sandbox: `mineclaw-bridge functions run` and the
console's dry-run form give the same result, because both call `dry_run`.

Nothing is performed: dispatches and native calls are recorded by `DryRunHost`, approvals are
answered as asked. A disabled Function runs anyway (a dry run is how an owner tries it before
enabling it), and so does an unreviewed one (it is how it gets reviewed).

Each command it would dispatch meets the checks a live run applies before sending
(`bridge.functions.dispatch_check`: the wire form and the never list, with the Function's own
`allow_never`), so a dry run stops where a live run would, and `verdict` says per operation
what a live run would do: `refused: never (...)`, `would ask confirmation`, `would dispatch`.
"""

from __future__ import annotations

from typing import Any, Literal

from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionsFile
from bridge.control.never_categories import effective_categories
from bridge.functions.dispatch_check import check_offline
from bridge.functions.host import DispatchInput, DryRunHost, InvocationInfo
from bridge.functions.operations import OperationRecord
from bridge.functions.pool_settings import PoolSettings, pool_settings
from bridge.functions.runtime import FunctionOutcome, FunctionRuntime
from bridge.policy.never_list import NeverList
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
    never: NeverList | None = None,
) -> FunctionOutcome:
    """Run ``name`` as ``player`` with nothing performed. ``never``: the never list in force
    (``whitelist.yml``; the built-in categories when None). Raises `SandboxError` when no
    worker could start."""
    judged = never or NeverList(effective_categories([], {}))
    opted_out = frozenset(spec.name for spec in catalogue.functions if spec.allow_never)

    def check_dispatch(request: DispatchInput, invocation: InvocationInfo) -> None:
        check_offline(request.command, judged, allow_never=invocation.function in opted_out)

    host = DryRunHost(approve=approve, tools=known_tools, check_dispatch=check_dispatch)
    # The same worker processes and limits as the bridge; one worker is enough for one call.
    settings = pool_settings(limits)
    # Imported here: every command line builds this module's parser, few run a Function.
    from bridge.functions.worker_pool import WorkerEngine

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


def verdict(record: OperationRecord, approve: Approve) -> str:
    """What a live run would do at this operation, in the words the dry-run reports show."""
    if record.error_code == "never_listed":
        return f"refused: never ({record.message})"
    if record.error_code is not None:
        return f"{record.status}: {record.error_code} ({record.message})"
    if record.action == "approval.request":
        return f"would ask confirmation (answered {approve!r} in this dry run)"
    if record.action == "command.dispatch":
        return (
            "would dispatch (judged on the spelling; the server resolves each label when it runs)"
        )
    if record.action == "native_tool.call":
        return "would call the tool"
    return record.status
