"""The Paper plugin's plugin.yml and plugin-link.yml agree with what the bridge expects."""

from __future__ import annotations

import re
import typing
from urllib.parse import urlsplit

from bridge.link.auth import TOKEN_FILE_NAME
from bridge.link.messages import Permission
from bridge.link.server import LinkSettings

from .files import PAPER, PAPER_POM, PARENT_POM, PLUGIN_LINK_YML, PLUGIN_YML, load_yaml

EVERYONE = {
    "mineclaw.command.chat",
    "mineclaw.command.approve",
    "mineclaw.tool.run_command",
    "mineclaw.command.private",
}
NOBODY = {"mineclaw.bypass.ratelimit"}


def test_the_permission_nodes_are_the_ones_the_bridge_accepts_as_granted() -> None:
    nodes = set(load_yaml(PLUGIN_YML)["permissions"])
    assert nodes == set(typing.get_args(Permission))


def test_each_node_has_its_documented_default() -> None:
    permissions = load_yaml(PLUGIN_YML)["permissions"]
    for node, entry in permissions.items():
        expected = True if node in EVERYONE else False if node in NOBODY else "op"
        assert entry["default"] == expected, node
        assert entry["description"], node


def test_folia_is_supported_and_the_command_is_left_to_brigadier() -> None:
    descriptor = load_yaml(PLUGIN_YML)
    assert descriptor["folia-supported"] is True
    # A commands: entry would register a second, Bukkit-style /mineclaw beside the Brigadier one.
    assert "commands" not in descriptor


def test_the_main_class_exists_and_the_api_version_matches_the_compiled_api() -> None:
    descriptor = load_yaml(PLUGIN_YML)
    main = PAPER / "src" / "main" / "java" / (descriptor["main"].replace(".", "/") + ".java")
    assert main.is_file(), main
    # MockBukkit (and a server) cannot construct a final main class.
    simple_name = descriptor["main"].rsplit(".", 1)[-1]
    assert not re.search(rf"\bfinal\s+class\s+{simple_name}\b", main.read_text("utf-8"))
    assert "${paper.compile.version}" in PAPER_POM.read_text("utf-8")
    match = re.search(r"<paper\.compile\.version>([^<]+)<", PARENT_POM.read_text("utf-8"))
    assert match, "paper.compile.version is not set in the parent pom"
    # The jar is compiled against the oldest API it supports (paper-api 1.21.4-R0.1-SNAPSHOT is
    # release 1.21.4's), and plugin.yml claims exactly that, so every newer server loads it.
    assert match.group(1) == str(descriptor["api-version"]) + "-R0.1-SNAPSHOT"
    assert str(descriptor["api-version"]) == "1.21.4"


def test_the_default_link_settings_reach_a_bridge_with_its_defaults() -> None:
    config = load_yaml(PLUGIN_LINK_YML)
    url = urlsplit(config["bridge-url"])
    defaults = LinkSettings()
    assert (url.scheme, url.hostname, url.port, url.path) == (
        "ws",
        defaults.host,
        defaults.port,
        defaults.path,
    )
    assert config["token"] == ""
    assert config["token-file"] == TOKEN_FILE_NAME
    assert config["verdict-timeout-ms"] == 250
