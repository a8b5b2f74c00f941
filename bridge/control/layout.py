"""The fixed names of the control-plane files and where their defaults live."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

# The folder commands use when no --config is given (the Makefile's CONFIG default).
DEFAULT_CONFIG_DIR = Path("mineclaw-config")

CONFIG_FILE = "config.yml"
PROVIDERS_FILE = "providers.yml"
WHITELIST_FILE = "whitelist.yml"
TOOLS_FILE = "tools.yml"
FUNCTIONS_FILE = "functions.yml"
MESSAGES_FILE = "message.yml"

# The YAML files, in the order problems are reported.
YAML_FILES: tuple[str, ...] = (
    CONFIG_FILE,
    PROVIDERS_FILE,
    WHITELIST_FILE,
    TOOLS_FILE,
    FUNCTIONS_FILE,
    MESSAGES_FILE,
)

# Function sources make functions.yml the one file that may legitimately be large.
MAX_YAML_BYTES: dict[str, int] = {name: 256 * 1024 for name in YAML_FILES}
MAX_YAML_BYTES[FUNCTIONS_FILE] = 4 * 1024 * 1024

DEFAULT_WORKSPACE_FILES: tuple[str, ...] = ("workspace/AGENTS.md",)
DEFAULT_SKILL_FILES: tuple[str, ...] = (
    "workspace/skills/server-rules.md",
    "workspace/skills/crafting-help.md",
)

ENV_TEMPLATE = (
    "# Secrets for the control-plane files, read as NAME=value. Referenced from YAML as ${NAME}.\n"
    "# Variables set in the bridge's environment take precedence over this file.\n"
    "# Keep this file private (chmod 600): the bridge warns when other users can read it.\n"
    "# Remove the # below and put your key after the =, e.g. OPENAI_API_KEY=sk-...\n"
    "# OPENAI_API_KEY=\n"
)


def default_bytes(relative: str) -> bytes:
    """The shipped default of a control-plane file, by its path inside the config folder."""
    resource = resources.files("bridge.control.defaults")
    for part in relative.split("/"):
        resource = resource.joinpath(part)
    return resource.read_bytes()
