"""A persona in a turn's instructions: text only, placed last.

The persona a lane speaks as (`bridge.control.souls_files`) is appended to the instructions the
turn fixed when it started, after ``AGENTS.md``, the skills index and the bridge's own lines.
Providers cache the start of a request (tools, then instructions, then the conversation): with
the persona last, lanes with different personas still share the whole common start, and each
lane's requests repeat their own start exactly from turn to turn. Nothing else of the snapshot
changes: the tools, gates, limits and budgets are the ones the turn would have without it.
"""

from __future__ import annotations

import dataclasses

from bridge.turns.ports import TurnSnapshot

PERSONA_HEADING = "## Persona"
PERSONA_NODE = "mineclaw.persona"
"""Lets a player choose the persona of their own private conversations (``/ai persona``)."""


def with_persona(snapshot: TurnSnapshot, persona: str | None) -> TurnSnapshot:
    """``snapshot`` with ``persona`` after its instructions (unchanged without one)."""
    if not persona:
        return snapshot
    section = f"{PERSONA_HEADING}\n\n{persona}"
    base = snapshot.instructions
    instructions = section if not base else f"{base}\n\n{section}"
    return dataclasses.replace(snapshot, instructions=instructions)
