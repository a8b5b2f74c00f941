"""docker/compose.yaml: parses, and runs the bridge beside the server the way install.md says."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from .files import COMPOSE, DOCKER, load_yaml
from .rules import compose_problems, resolved


def test_the_compose_file_follows_every_rule() -> None:
    assert compose_problems(load_yaml(COMPOSE), DOCKER) == []


def test_type_defaults_to_paper_and_folia_is_one_variable_away() -> None:
    env = load_yaml(COMPOSE)["services"]["minecraft"]["environment"]
    assert resolved(env["TYPE"]) == "PAPER"
    assert env["TYPE"].startswith("${MINECRAFT_TYPE:-")


def _set(path: list[str], value: object) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _drop(path: list[str]) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return change


BROKEN = {
    "bridge on its own network": (_drop(["services", "bridge", "network_mode"]), "network_mode"),
    "bridge publishes the link": (_set(["services", "bridge", "ports"], ["25580:25580"]), "ports"),
    "server publishes the link": (
        _set(["services", "minecraft", "ports"], ["25565:25565", "25580:25580"]),
        "link port",
    ),
    "no EULA": (_set(["services", "minecraft", "environment", "EULA"], True), "EULA"),
    "vanilla server": (_set(["services", "minecraft", "environment", "TYPE"], "VANILLA"), "TYPE"),
    "another image": (_set(["services", "minecraft", "image"], "example/minecraft"), "image"),
    "no plugin mount": (_set(["services", "minecraft", "volumes"], ["./data:/data"]), "plugin jar"),
    "bridge reads another folder": (
        _set(["services", "bridge", "volumes"], ["./elsewhere:/config"]),
        "plugins/Mineclaw",
    ),
    "bridge serves another folder": (
        _set(["services", "bridge", "command"], ["serve", "--config", "/tmp"]),
        "--config",
    ),
    "bridge as root": (_set(["services", "bridge", "user"], "0:0"), "UID"),
    "missing Dockerfile": (
        _set(["services", "bridge", "build", "dockerfile"], "docker/nope.Dockerfile"),
        "does not exist",
    ),
    "no bridge": (_drop(["services", "bridge"]), "both required"),
    "searxng always on": (_drop(["services", "searxng", "profiles"]), "optional"),
    "searxng published": (_set(["services", "searxng", "ports"], ["8080:8080"]), "publishes"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_each_rule_catches_its_breakage(case: str) -> None:
    change, expected = BROKEN[case]
    doc = copy.deepcopy(load_yaml(COMPOSE))
    change(doc)
    problems = compose_problems(doc, DOCKER)
    assert any(expected in problem for problem in problems), problems
