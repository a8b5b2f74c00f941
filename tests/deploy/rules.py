"""Structural rules for docker/compose.yaml and docker/bridge.Dockerfile.

Each function returns the problems it finds as sentences (empty: none), so the tests can check the
real files and also show, on broken copies, that every rule catches what it is for.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .files import Instruction, final_stage, load_yaml, parse_dockerfile

LINK_PORT = 25580
SHARED_SUFFIX = "/plugins/Mineclaw"
_DEFAULTED = re.compile(r"^\$\{[A-Z_][A-Z0-9_]*:-(?P<default>[^}]*)\}$")


def resolved(value: object) -> str:
    """A compose value with a ``${VAR:-default}`` reference replaced by its default."""
    text = str(value)
    match = _DEFAULTED.match(text)
    return match.group("default") if match else text


def _volumes(service: dict[str, Any]) -> list[tuple[str, str]]:
    pairs = []
    for entry in service.get("volumes", []):
        if isinstance(entry, str):
            source, _, rest = entry.partition(":")
            pairs.append((source, rest.split(":")[0]))
        else:
            pairs.append((str(entry.get("source")), str(entry.get("target"))))
    return pairs


def compose_problems(doc: dict[str, Any], compose_dir: Path) -> list[str]:
    problems: list[str] = []
    services = doc.get("services", {})
    minecraft, bridge = services.get("minecraft"), services.get("bridge")
    if not isinstance(minecraft, dict) or not isinstance(bridge, dict):
        return ["services 'minecraft' and 'bridge' are both required"]
    env = minecraft.get("environment", {})
    if not str(minecraft.get("image", "")).startswith("itzg/minecraft-server"):
        problems.append("minecraft: the image is not itzg/minecraft-server")
    if env.get("EULA") != "TRUE":
        problems.append("minecraft: EULA must be the string TRUE")
    if resolved(env.get("TYPE", "")) not in {"PAPER", "FOLIA"}:
        problems.append("minecraft: TYPE must be PAPER or FOLIA")
    mc_volumes = _volumes(minecraft)
    if not any(target in {"/plugins", "/data/plugins"} for _, target in mc_volumes):
        problems.append("minecraft: nothing is mounted for the plugin jar (/plugins)")
    data_sources = [source for source, target in mc_volumes if target == "/data"]
    if bridge.get("network_mode") != "service:minecraft":
        problems.append("bridge: network_mode must be service:minecraft (loopback link)")
    for name, service in services.items():
        published = [str(port) for port in service.get("ports", []) + service.get("expose", [])]
        if name == "bridge" and published:
            problems.append("bridge: publishes ports; the link must stay on loopback")
        if any(str(LINK_PORT) in port for port in published):
            problems.append(f"{name}: publishes the link port {LINK_PORT}")
    shared = [
        target
        for source, target in _volumes(bridge)
        if any(source == data + SHARED_SUFFIX for data in data_sources)
    ]
    if not shared:
        problems.append("bridge: the server's plugins/Mineclaw folder is not mounted")
    command = [str(part) for part in bridge.get("command", [])]
    if shared and command[-2:] != ["--config", shared[0]]:
        problems.append("bridge: command must end with --config <the shared folder>")
    uid = resolved(env.get("UID", "1000"))
    if str(bridge.get("user", "")).split(":")[0] != uid:
        problems.append(f"bridge: user must be the server's UID {uid}, to share the folder")
    searxng = services.get("searxng")
    if isinstance(searxng, dict):
        if "search" not in searxng.get("profiles", []):
            problems.append("searxng: must be optional (profiles: [search])")
        settings = compose_dir / "searxng" / "settings.yml"
        search = load_yaml(settings).get("search") or {} if settings.is_file() else {}
        if "json" not in search.get("formats", []):
            problems.append("searxng: searxng/settings.yml must enable json (web_search)")
        if searxng.get("ports"):
            problems.append("searxng: publishes ports; only the bridge asks it")
    build = bridge.get("build", {})
    dockerfile = compose_dir / str(build.get("context", ".")) / str(build.get("dockerfile", ""))
    if not dockerfile.is_file():
        problems.append(f"bridge: build.dockerfile {dockerfile} does not exist")
    return problems + _postgres_problems(services, doc.get("volumes") or {}, compose_dir)


_DSN = re.compile(
    r"^\s*dsn:\s*postgresql://(?P<user>[^@\s]+)@(?P<host>[^:/\s]+):5432/(?P<db>\S+)$", re.M
)
_REQUIRED = re.compile(r"^\$\{(?P<name>[A-Z_][A-Z0-9_]*):\?[^}]+\}$")
PG_DATA = "/var/lib/postgresql/data"


def _postgres_problems(
    services: dict[str, Any], named: dict[str, Any], compose_dir: Path
) -> list[str]:
    """The store on the compose file's PostgreSQL: the bridge's first start names it, the
    password is one required variable given to both, the data is in a named volume."""
    postgres, bridge = services.get("postgres"), services["bridge"]
    if not isinstance(postgres, dict):
        return ["postgres: the service is missing (the bridge's store)"]
    problems = []
    if postgres.get("ports") or postgres.get("network_mode"):
        problems.append(
            "postgres: publishes ports or leaves the compose network; only the bridge asks it"
        )
    if postgres.get("profiles"):
        problems.append("postgres: must start with the others (no profile)")
    depends = bridge.get("depends_on", [])
    if "postgres" not in depends:
        problems.append("bridge: must depend on postgres")
    elif not isinstance(depends, dict) or depends["postgres"].get("condition") != "service_healthy":
        problems.append("bridge: must wait for postgres to be healthy (condition: service_healthy)")
    if "pg_isready" not in (postgres.get("healthcheck") or {}).get("test", []):
        problems.append("postgres: needs a healthcheck (pg_isready) for the bridge to wait on")
    data = [source for source, target in _volumes(postgres) if target == PG_DATA]
    if not data or data[0] not in named:
        problems.append(f"postgres: {PG_DATA} must be a named volume declared under volumes")
    env = postgres.get("environment", {})
    secret = _REQUIRED.match(str(env.get("POSTGRES_PASSWORD", "")))
    given = _REQUIRED.match(str(bridge.get("environment", {}).get("MINECLAW_DB_PASSWORD", "")))
    if secret is None or given is None or secret.group("name") != given.group("name"):
        problems.append(
            "postgres/bridge: POSTGRES_PASSWORD and the bridge's MINECLAW_DB_PASSWORD must be the "
            "same required variable (${NAME:?...})"
        )
    entrypoint = [str(part) for part in bridge.get("entrypoint", [])]
    mounted = {target: source for source, target in _volumes(bridge)}
    script = compose_dir / mounted.get(entrypoint[-1], "") if entrypoint else None
    if script is None or not script.is_file():
        problems.append("bridge: the entrypoint script is not mounted from this folder")
        return problems
    text = script.read_text(encoding="utf-8")
    dsn = _DSN.search(text)
    if dsn is None or dsn.group("host") != "postgres":
        problems.append(f"bridge: {script.name} must set storage.dsn to the postgres service")
    elif (dsn.group("user"), dsn.group("db")) != (env.get("POSTGRES_USER"), env.get("POSTGRES_DB")):
        problems.append(
            f"bridge: {script.name}'s dsn names another user or database than postgres's"
        )
    if "password: ${MINECLAW_DB_PASSWORD}" not in text or 'exec mineclaw-bridge "$@"' not in text:
        problems.append(
            f"bridge: {script.name} must take the password from MINECLAW_DB_PASSWORD and exec "
            "the bridge"
        )
    return problems


def _json_words(argument: str) -> list[str] | None:
    try:
        words = json.loads(argument)
    except json.JSONDecodeError:
        return None
    return words if isinstance(words, list) else None


def _global_args(instructions: list[Instruction]) -> dict[str, str]:
    """The ARG defaults declared before the first FROM: what a FROM line may refer to."""
    declared: dict[str, str] = {}
    for item in instructions:
        if item.keyword == "FROM":
            break
        if item.keyword == "ARG":
            name, _, default = item.argument.partition("=")
            declared[name.strip()] = default.strip().strip('"')
    return declared


def _resolved(word: str, declared: dict[str, str]) -> str:
    return re.sub(
        r"\$\{(\w+)\}|\$(\w+)",
        lambda found: declared.get(found.group(1) or found.group(2), found.group(0)),
        word,
    )


def dockerfile_problems(text: str, repo_root: Path, python_version: str) -> list[str]:
    problems: list[str] = []
    instructions = parse_dockerfile(text)
    stage = final_stage(instructions)
    base = _resolved(stage[0].argument.split()[0], _global_args(instructions))
    if not base.startswith(f"python:{python_version}"):
        problems.append(f"line {stage[0].line}: the runtime is not python:{python_version}")
    users = [item for item in stage if item.keyword == "USER"]
    if not users or users[-1].argument.split(":")[0] in {"root", "0"}:
        problems.append("the final stage must switch to a non-root USER")
    for item in instructions:
        if item.keyword == "EXPOSE":
            problems.append(f"line {item.line}: EXPOSE; the link must stay on loopback")
        if item.keyword == "COPY" and not item.argument.startswith("--from"):
            for source in item.argument.split()[:-1]:
                if not (repo_root / source).exists():
                    problems.append(f"line {item.line}: COPY source {source} does not exist")
    entrypoint = [item for item in stage if item.keyword == "ENTRYPOINT"]
    if not entrypoint or _json_words(entrypoint[-1].argument) != ["mineclaw-bridge"]:
        problems.append('ENTRYPOINT must be ["mineclaw-bridge"] (exec form, so signals reach it)')
    cmd = [item for item in stage if item.keyword == "CMD"]
    words = _json_words(cmd[-1].argument) if cmd else None
    if not words or words[0] != "serve" or len(words) < 3 or words[-2] != "--config":
        problems.append('CMD must be ["serve", ..., "--config", DIR]')
    return problems
