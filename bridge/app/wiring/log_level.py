"""``config.yml``'s ``logging.level``, applied at start and on every reload (``serve``)."""

from __future__ import annotations

import logging

from bridge.control import ControlPlane

BRIDGE_LOGGER = "bridge"
"""The logger whose level ``logging.level`` sets: every bridge module logs below it."""


def apply_log_level(plane: ControlPlane) -> None:
    """Set the bridge's log level from ``logging.level``. Only the bridge's own loggers: the
    handlers ``serve`` installs pass every level, so this one setting decides."""
    logging.getLogger(BRIDGE_LOGGER).setLevel(plane.config.logging.level)
