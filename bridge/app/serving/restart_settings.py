"""Settings ``serve`` reads only when it starts: a reload that changes one is reported, since
the new value waits for a restart (``docs/configuration.md`` marks them)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from bridge.control import ControlPlane


def restart_only_fields(plane: ControlPlane) -> dict[str, object]:
    """Each restart-only setting of ``plane`` by its dotted name: every ``link.*`` field (the
    listening socket is bound once, at start), ``storage.*``, ``metrics.*`` and ``console.*``. Not
    ``functions.*``: a reload that changes the worker pool's settings starts a new pool for
    the next call (``bridge.functions.live_pool``)."""
    link = plane.config.link
    # An unset optional value (link.tls_cert) is shown as "none", as storage.dsn is.
    fields: dict[str, object] = {
        f"link.{name}": "none" if (value := getattr(link, name)) is None else value
        for name in type(link).model_fields
    }
    # The stores are opened once, at start. The password is left out: this is written to
    # data/serving.json and printed.
    storage = plane.config.storage
    fields["storage.backend"] = storage.backend
    fields["storage.dsn"] = storage.dsn or "none"
    # The metrics endpoint is bound once, at start, like the link.
    metrics = plane.config.metrics
    fields.update(
        {f"metrics.{name}": getattr(metrics, name) for name in type(metrics).model_fields}
    )
    # So is the console, with its settings (all but the login link's lifetime, which
    # `mineclaw-bridge console` reads when it issues a link).
    console = plane.config.console
    fields.update(
        {
            f"console.{name}": "none" if (value := getattr(console, name)) is None else value
            for name in type(console).model_fields
            if name != "login_link_minutes"
        }
    )
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


SERVING_FILE = "serving.json"
"""In ``<config>/data`` while ``serve`` runs: its process id and the restart-only values it
started with, so ``validate`` can say which of the folder's values wait for a restart."""


class ServingState(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    pid: int
    settings: dict[str, str | int | float | bool]


def write_serving_state(data_dir: Path, plane: ControlPlane) -> Path:
    """Record this process and its restart-only values; the caller removes the file at stop."""
    state = ServingState(pid=os.getpid(), settings=restart_only_fields(plane))
    path = data_dir / SERVING_FILE
    data_dir.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(state.model_dump_json())
    temporary.replace(path)  # a reader never sees half a file
    return path


def running_differences(data_dir: Path, plane: ControlPlane) -> tuple[int, list[str]] | None:
    """The running bridge's pid and a sentence per restart-only setting whose value in
    ``plane`` differs from the one it started with; None when no bridge runs on this folder
    (no file, an unreadable one, or one a stopped process left behind)."""
    try:
        state = ServingState.model_validate_json((data_dir / SERVING_FILE).read_text())
        os.kill(state.pid, 0)  # signal 0: only asks whether the process exists
    except (OSError, ValueError):
        return None
    now = restart_only_fields(plane)
    return state.pid, [
        f"{name}: the running bridge uses {state.settings[name]}, this folder says {now[name]}; "
        "it takes effect when the bridge restarts"
        for name in now
        if name in state.settings and state.settings[name] != now[name]
    ]
