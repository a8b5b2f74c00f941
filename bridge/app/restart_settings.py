"""Settings ``serve`` reads only when it starts: a reload that changes one is reported, since
the new value waits for a restart (``docs/configuration.md`` marks them)."""

from __future__ import annotations

from bridge.control import ControlPlane

RESTART_ONLY = ("functions.workers",)
"""Besides every ``link.*`` field: the listening socket is bound once, at start. The Function
worker pool is sized when it starts."""


def restart_only_fields(plane: ControlPlane) -> dict[str, object]:
    """Each restart-only setting of ``plane`` by its dotted name."""
    link = plane.config.link
    fields: dict[str, object] = {
        f"link.{name}": getattr(link, name) for name in type(link).model_fields
    }
    for dotted in RESTART_ONLY:
        section, name = dotted.split(".")
        fields[dotted] = getattr(getattr(plane.config, section), name)
    return fields


def restart_needed(running: ControlPlane, loaded: ControlPlane) -> list[str]:
    """One sentence per restart-only setting whose loaded value differs from the running one."""
    before, after = restart_only_fields(running), restart_only_fields(loaded)
    return [
        f"config.yml: {name} changed from {before[name]} to {after[name]}; it takes effect "
        "when the bridge restarts"
        for name in before
        if before[name] != after[name]
    ]
