"""The control plane: strict configuration files, validated jointly and published atomically.

Public API::

    init_config_dir(path) -> list[Path]
    load_control_plane(path, *, environ=None) -> ControlPlane   # raises ConfigLoadError
    ControlPlaneStore(path).current / .reload()
"""

from bridge.control.init import init_config_dir
from bridge.control.plane import ControlPlane, ControlPlaneStore, load_control_plane
from bridge.control.problems import ConfigLoadError, Problem

__all__ = [
    "ConfigLoadError",
    "ControlPlane",
    "ControlPlaneStore",
    "Problem",
    "init_config_dir",
    "load_control_plane",
]
