"""``/mineclaw status``: the link, the model, each provider's reachability, listen mode, the
web tools, the session, what runs, the Function sandbox, the MCP servers, memory and the audit
log, one line each."""

from __future__ import annotations

from bridge.app.commands.replies import Replies
from bridge.app.serving.provider_probes import NO_PROVIDER
from bridge.app.serving.served import NotConfiguredError
from bridge.app.wiring.runtime import Runtime
from bridge.functions.worker_confinement import BRIDGE_LAYERS, describe
from bridge.link.messages import Text


async def status_lines(runtime: Runtime, replies: Replies) -> list[Text]:
    text = runtime.text
    link = runtime.link
    model = {"model": runtime.model_ref()}
    try:
        runtime.snapshot(None)
        model_line = text("status.model", model)
    except NotConfiguredError as exc:
        model_line = text("status.model_unavailable", {**model, "reason": str(exc)})
    state = runtime.session.state
    tokens = runtime.session.estimated_tokens(runtime.plane.config.context.max_messages)
    session = {
        "turns": str(len(state.turns)),
        "messages": str(state.message_count),
        "tokens": str(tokens),
    }
    activity = {"activity": runtime.lanes.status(), "version": str(runtime.plane.version)}
    web_tools = runtime.served.web_tools
    web_line = (
        text("status.web_on", {"tools": ", ".join(web_tools)})
        if web_tools
        else text("status.web_off")
    )
    # One line per MCP server: its state, its tools and, when it cannot take calls, why.
    review = runtime.plane.config.mcp.require_review
    mcp_lines = [
        replies.line(f"MCP server {line}") for line in runtime.mcp.status(require_review=review)
    ]
    # Each provider probed (at most once a minute): reachable, unreachable and why, or not
    # configured; the command waits for the probes' own deadline at most.
    states = await runtime.served.provider_states()
    provider_lines = [replies.line(f"provider {pid}: {word}") for pid, word in states] or [
        replies.line(NO_PROVIDER)
    ]
    return [
        text("status.link_up" if link is not None and link.connected else "status.link_down"),
        model_line,
        *provider_lines,
        text("status.listen_on" if runtime.listen.on else "status.listen_off"),
        web_line,
        text("status.session_summarised" if state.summary else "status.session", session),
        text("status.activity", activity),
        text("status.sandbox", {"layers": sandbox_layers(runtime.functions.pool.confinement)}),
        *mcp_lines,
        text("status.memory", {"state": memory_state(runtime)}),
        text(
            "status.audit",
            {
                "dropped": str(runtime.audit.dropped_events),
                "lost": str(runtime.audit.lost_events),
            },
        ),
    ]


def memory_state(runtime: Runtime) -> str:
    """``/mineclaw status``'s memory words: off, keywords only, or the vectors' progress."""
    if runtime.memories is None or not runtime.plane.config.memory.enabled:
        return "off"
    embedder = runtime.memory_embedder
    return "keywords only" if embedder is None else embedder.status()


def sandbox_layers(workers: dict[str, str] | None) -> str:
    """The Function sandbox's OS layers for `/mineclaw status`: the workers' (once the pool has
    started) and the bridge's own."""
    bridge = describe(BRIDGE_LAYERS) or "not_dumpable unavailable: not set (not serving)"
    if workers is None:
        return f"workers not started yet (they start with the first call); {bridge}"
    return f"{describe(workers)}; {bridge}"
