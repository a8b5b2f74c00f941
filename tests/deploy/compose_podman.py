"""docker/compose.yaml as podman commands, for hosts whose only container engine is podman and
whose compose tools cannot read the file (docker/podman_e2e.py runs what this makes).

Debian 12's podman-compose 1.0.3 stops at ``env_file``'s ``path``/``required`` form (a
TypeError) and would pass ``network_mode: service:minecraft`` to podman as it stands (podman
knows ``container:NAME``); its docker-compose 1.29.2 refuses the top-level ``name``. So this
reads the compose file itself and makes one ``podman run`` per service the way Compose does: a
network ``<project>_default`` on which each service is reachable by its name, ``service:X`` as
X's container's namespace, named volumes ``<project>_<name>``, bind sources relative to the
project folder, ``${VAR:?message}``/``${VAR:-default}``/``${VAR}`` from the variables given,
services started after what they depend on, and after a dependency is healthy when the
condition says so (its ``healthcheck`` test run in it with ``podman exec`` until it passes:
podman's own health timers need systemd). A key it does not translate is refused, never
ignored, so the run is of the file as written. ``overrides`` replace a service's keys (what
cannot be had here: an image from a registry).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

TRANSLATED = {
    "image", "build", "network_mode", "depends_on", "user", "entrypoint", "command",
    "environment", "env_file", "volumes", "ports", "restart", "stdin_open", "tty", "profiles",
    "healthcheck",
}  # fmt: skip
CONDITIONS = {"service_started", "service_healthy"}
_VARIABLE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:[?-])(?P<arg>[^}]*))?\}")


class ComposeError(Exception):
    """The compose file asks for something this translation cannot do, or a variable is unset."""


def interpolate(value: Any, variables: Mapping[str, str]) -> Any:
    """Compose's variable references replaced in every string of ``value``."""
    if isinstance(value, dict):
        return {key: interpolate(item, variables) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolate(item, variables) for item in value]
    if not isinstance(value, str):
        return value

    def one(found: re.Match[str]) -> str:
        name, op, arg = found.group("name"), found.group("op"), found.group("arg")
        given = variables.get(name, "")
        if given:
            return given
        if op == ":?":
            raise ComposeError(f"variable {name} is not set: {arg}")
        return arg if op == ":-" else ""

    return _VARIABLE.sub(one, value.replace("$$", "\0")).replace("\0", "$")


@dataclass(frozen=True)
class Health:
    """A service's ``healthcheck``: ``test`` run in its container, tried ``retries`` times."""

    test: list[str]
    interval_s: float
    retries: int


@dataclass(frozen=True)
class Service:
    name: str
    container: str
    image: str
    build: list[str] | None  # podman build's arguments, or None to use the image as it is
    run: list[str]  # podman run's arguments
    health: Health | None = None
    healthy_first: tuple[str, ...] = ()  # services that must be healthy before this one starts


@dataclass(frozen=True)
class Project:
    name: str
    network: str
    volumes: list[str]
    services: list[Service] = field(default_factory=list)  # in start order


def translate(
    compose_file: Path,
    project_dir: Path,
    variables: Mapping[str, str],
    *,
    project: str,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    build_args: Mapping[str, Mapping[str, str]] | None = None,
) -> Project:
    """The podman commands for ``compose_file``'s services without a profile."""
    doc = yaml.safe_load(compose_file.read_text(encoding="utf-8"))
    doc = interpolate(doc, variables)
    services: dict[str, dict[str, Any]] = {}
    for name, raw in doc["services"].items():
        service = {**raw, **(overrides or {}).get(name, {})}
        if not service.get("profiles"):
            services[name] = {k: v for k, v in service.items() if v is not None}
    network = f"{project}_default"
    volumes = [f"{project}_{name}" for name in doc.get("volumes") or {}]
    made = Project(project, network, volumes)
    for name in _start_order(services):
        made.services.append(
            _service(name, services[name], compose_file.parent, project_dir, made, build_args)
        )
    return made


def _start_order(services: dict[str, dict[str, Any]]) -> list[str]:
    order: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in order:
            return
        if name in path:
            raise ComposeError(f"depends_on has a cycle: {' -> '.join((*path, name))}")
        if name not in services:
            raise ComposeError(f"{path[-1]} depends on {name}, which is not started")
        for needed in _depends_on(services[name]):
            visit(needed, (*path, name))
        order.append(name)

    for name in services:
        visit(name, ())
    return order


def _service(
    name: str,
    service: dict[str, Any],
    compose_dir: Path,
    project_dir: Path,
    project: Project,
    build_args: Mapping[str, Mapping[str, str]] | None,
) -> Service:
    unknown = sorted(set(service) - TRANSLATED)
    if unknown:
        raise ComposeError(f"service {name}: not translated: {', '.join(unknown)}")
    depends = _depends_on(service)
    for needed, condition in depends.items():
        if condition not in CONDITIONS:
            raise ComposeError(
                f"service {name}: depends_on {needed}: {condition} is not translated"
            )
    container = f"{project.name}-{name}-1"
    image = str(service.get("image") or f"localhost/{project.name}-{name}")
    build = None
    if "build" in service:
        spec = service["build"]
        context = (compose_dir / spec.get("context", ".")).resolve()
        build = ["build", "-t", image, "-f", str(context / spec.get("dockerfile", "Dockerfile"))]
        for key, value in {**spec.get("args", {}), **(build_args or {}).get(name, {})}.items():
            build += ["--build-arg", f"{key}={value}"]
        build.append(str(context))
    run = [
        "run",
        "-d",
        "--name",
        container,
        "--label",
        f"com.docker.compose.project={project.name}",
    ]
    mode = service.get("network_mode")
    if mode is None:
        run += ["--network", project.network, "--network-alias", name]
    elif mode.startswith("service:"):
        run += ["--network", f"container:{project.name}-{mode.removeprefix('service:')}-1"]
    else:
        run += ["--network", mode]
    for volume in service.get("volumes", []):
        source, target, *options = str(volume).split(":")
        if source.startswith((".", "/")):
            source = str((project_dir / source).resolve())
        else:
            source = f"{project.name}_{source}"
            if source not in project.volumes:
                raise ComposeError(f"service {name}: volume {source} is not declared")
        run += ["-v", ":".join([source, target, *options])]
    for entry in service.get("env_file", []):
        path, required = (
            (entry, True)
            if isinstance(entry, str)
            else (entry["path"], entry.get("required", True))
        )
        file = project_dir / path
        if file.is_file():
            run += ["--env-file", str(file)]
        elif required:
            raise ComposeError(f"service {name}: env_file {file} does not exist")
    environment = service.get("environment", {})
    if isinstance(environment, list):
        environment = dict(item.split("=", 1) for item in environment)
    for key, value in environment.items():
        run += ["-e", f"{key}={value}"]
    if "user" in service:
        run += ["--user", str(service["user"])]
    for port in service.get("ports", []):
        run += ["-p", str(port)]
    if "restart" in service:
        run += ["--restart", str(service["restart"])]
    if service.get("stdin_open"):
        run.append("-i")
    if service.get("tty"):
        run.append("-t")
    if "entrypoint" in service:
        entrypoint = service["entrypoint"]
        run += [
            "--entrypoint",
            json.dumps(entrypoint if isinstance(entrypoint, list) else [entrypoint]),
        ]
    run.append(image)
    command = service.get("command", [])
    run += command if isinstance(command, list) else str(command).split()
    healthy_first = tuple(n for n, condition in depends.items() if condition == "service_healthy")
    return Service(name, container, image, build, run, _health(name, service), healthy_first)


def _depends_on(service: dict[str, Any]) -> dict[str, str]:
    """Each service depended on, with its condition (a plain list: started)."""
    depends = service.get("depends_on", [])
    if isinstance(depends, list):
        return {needed: "service_started" for needed in depends}
    return {
        needed: (spec or {}).get("condition", "service_started") for needed, spec in depends.items()
    }


def _health(name: str, service: dict[str, Any]) -> Health | None:
    check = service.get("healthcheck")
    if check is None:
        return None
    test = check.get("test")
    if not isinstance(test, list) or not test or test[0] not in ("CMD", "CMD-SHELL"):
        raise ComposeError(
            f"service {name}: healthcheck test must be [CMD, ...] or [CMD-SHELL, ...]"
        )
    command = test[1:] if test[0] == "CMD" else ["/bin/sh", "-c", " ".join(test[1:])]
    return Health(
        command, _seconds(str(check.get("interval", "30s"))), int(check.get("retries", 3))
    )


def _seconds(duration: str) -> float:
    found = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)", duration)
    if found is None:
        raise ComposeError(f"a duration this translation does not read: {duration}")
    return float(found.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0}[found.group(2)]
