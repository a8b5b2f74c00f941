"""``/mineclaw listen why``: who decides which listen-mode lines start a turn, and what was
decided about the latest lines and why (``mineclaw.command.listen``, OP by default).

The lines are the bridge's own report, in English like ``/mineclaw usage``; what players said
and the model's reasons pass through the redactor with every other value of a reply line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bridge.app.wiring.runtime import Runtime

SHOWN = 10


def listen_why_lines(runtime: Runtime) -> list[str]:
    plane = runtime.plane
    settings = plane.config.listen
    decider = runtime.listen_decisions
    state = "on" if runtime.listen.on else "off"
    names = ", ".join((plane.config.identity.name, *settings.aliases))
    window = f"{settings.reply_window_ms / 1000:g} s"
    if settings.answer_every_line:
        how = "every line that passes the gates starts a turn (listen.answer_every_line)"
    elif settings.decision_model:
        contract = decider.contract
        circuit = "open" if contract.circuit_open else "closed"
        how = (
            f"the decision model {settings.decision_model} decides (threshold "
            f"{settings.decision_threshold:g}; {contract.in_flight} of {contract.max_in_flight} "
            f"in flight, circuit {circuit}); the classifier when it cannot"
        )
    else:
        how = f"the classifier decides (names: {names}; follow-ups within {window})"
    lines = [f"listen mode {state}: {how}"]
    records = decider.log.latest(SHOWN)
    if not records:
        lines.append("no listen-mode line has been decided yet")
    lines.extend(record.shown() for record in records)
    return lines
