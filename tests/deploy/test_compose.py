"""docker/compose.yaml: parses, and runs the bridge beside the server the way install.md says."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from .compose_podman import ComposeError, Project, interpolate, translate
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
    "no postgres": (_drop(["services", "postgres"]), "postgres: the service is missing"),
    "postgres published": (_set(["services", "postgres", "ports"], ["5432:5432"]), "publishes"),
    "postgres optional": (_set(["services", "postgres", "profiles"], ["db"]), "no profile"),
    "bridge before postgres": (
        _set(["services", "bridge", "depends_on"], ["minecraft"]),
        "depend on postgres",
    ),
    "bridge not waiting for postgres": (
        _set(["services", "bridge", "depends_on"], ["minecraft", "postgres"]),
        "healthy",
    ),
    "postgres without a healthcheck": (
        _drop(["services", "postgres", "healthcheck"]),
        "pg_isready",
    ),
    "postgres data in a bind mount": (
        _set(["services", "postgres", "volumes"], ["./pg:/var/lib/postgresql/data"]),
        "named volume",
    ),
    "postgres password with a default": (
        _set(["services", "postgres", "environment", "POSTGRES_PASSWORD"], "${PW:-mineclaw}"),
        "same required variable",
    ),
    "bridge without the password": (
        _drop(["services", "bridge", "environment", "MINECLAW_DB_PASSWORD"]),
        "same required variable",
    ),
    "another database user": (
        _set(["services", "postgres", "environment", "POSTGRES_USER"], "postgres"),
        "another user or database",
    ),
    "first start not mounted": (
        _set(["services", "bridge", "volumes"], ["./data/plugins/Mineclaw:/config"]),
        "entrypoint script is not mounted",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_each_rule_catches_its_breakage(case: str) -> None:
    change, expected = BROKEN[case]
    doc = copy.deepcopy(load_yaml(COMPOSE))
    change(doc)
    problems = compose_problems(doc, DOCKER)
    assert any(expected in problem for problem in problems), problems


def _translated(variables: dict[str, str] | None = None) -> Project:
    given = {"MINECLAW_DB_PASSWORD": "s3cret"} if variables is None else variables
    return translate(COMPOSE, Path("/srv/mc"), given, project="mineclaw")


def test_podman_runs_each_service_as_compose_would() -> None:
    project = _translated()
    services = {service.name: service for service in project.services}
    # The profile's searxng stays off; the bridge starts after what it depends on.
    assert [s.name for s in project.services] == ["minecraft", "postgres", "bridge"]
    bridge, postgres = services["bridge"].run, services["postgres"].run
    assert bridge[bridge.index("--network") + 1] == "container:mineclaw-minecraft-1"
    assert postgres[postgres.index("--network") :][:4] == [
        "--network", "mineclaw_default", "--network-alias", "postgres",
    ]  # fmt: skip
    assert "MINECLAW_DB_PASSWORD=s3cret" in bridge and "POSTGRES_PASSWORD=s3cret" in postgres
    assert "/srv/mc/data/plugins/Mineclaw:/config" in bridge
    assert "mineclaw_postgres:/var/lib/postgresql/data" in postgres
    assert project.volumes == ["mineclaw_postgres"]
    assert bridge[bridge.index("--user") + 1] == "1000:1000"
    assert bridge[-5:] == ["mineclaw-bridge:local", "serve", "--init", "--config", "/config"]
    entry = bridge[bridge.index("--entrypoint") + 1]
    assert json.loads(entry) == ["/bin/sh", "/opt/mineclaw/first-start.sh"]
    assert services["bridge"].build is not None
    assert services["bridge"].build[-1] == str(DOCKER.parent)
    # The bridge starts once PostgreSQL answers its healthcheck, run in its container.
    assert services["bridge"].healthy_first == ("postgres",)
    health = services["postgres"].health
    assert health is not None and health.test[0] == "pg_isready" and health.retries == 60
    assert health.interval_s == 2.0


def test_the_translation_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    with pytest.raises(
        ComposeError,
        match="MINECLAW_DB_PASSWORD is not set: set MINECLAW_DB_PASSWORD in docker/.env",
    ):
        _translated({})
    doc = load_yaml(COMPOSE)
    doc["services"]["bridge"]["cap_add"] = ["NET_ADMIN"]
    changed = tmp_path / "compose.yaml"
    changed.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ComposeError, match="service bridge: not translated: cap_add"):
        translate(changed, tmp_path, {"MINECLAW_DB_PASSWORD": "x"}, project="p")
    del doc["services"]["bridge"]["cap_add"]
    doc["services"]["bridge"]["depends_on"]["postgres"]["condition"] = "service_completed"
    changed.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ComposeError, match="depends_on postgres: service_completed is not"):
        translate(changed, tmp_path, {"MINECLAW_DB_PASSWORD": "x"}, project="p")


def test_variables_are_interpolated_as_compose_does() -> None:
    given = {"A": "1", "EMPTY": ""}
    assert interpolate("${A}-${B:-two}-${EMPTY:-three}-$${A}", given) == "1-two-three-${A}"
    with pytest.raises(ComposeError, match="variable B is not set: say so"):
        interpolate({"k": ["${B:?say so}"]}, given)
