"""Starts docker/compose.yaml with podman (the bridge, PostgreSQL, the server's container) and
links the testkit JVM to the bridge in it, as the plugin in the Paper container would.

Not part of `make test` (CI has no container engine and the images take minutes to build): run
it by hand where podman, runc and mmdebstrap are installed (`apt-get install podman runc
mmdebstrap`), as root, from the repository root after `make java`:

    python docker/podman_e2e.py [--keep]

No registry is reached. What a registry would give is made from Debian's packages (mmdebstrap,
then `podman import`): the Python base of the bridge image (`PYTHON_IMAGE`) and PostgreSQL
(docker/postgres-debian.Dockerfile, standing in for `postgres:17` with the same variables). The
bridge's dependencies come from the package index while its image builds.

The `minecraft` service cannot run here: its image `itzg/minecraft-server` comes from a
registry, and at start it downloads the Paper server from PaperMC, which this machine cannot
reach (no Paper server jar is to be had here at all, only paper-api built from its sources). Its
container is started from the Debian base instead, with the compose file's volumes, environment
and network, holding the network namespace the bridge joins (`network_mode: service:minecraft`);
the testkit JVM (the plugin core on a stand-in server) runs on the host inside that namespace
(nsenter), reads link.token from the shared folder and links to ws://127.0.0.1:25580/link as
the plugin would. Every other service runs as compose.yaml says (tests/deploy/compose_podman.py
translates it; Debian's podman-compose cannot read it).

It checks: the bridge's first start wrote its files with storage on PostgreSQL, the testkit
links, a player's `@ai hello` is answered, the bridge holds the server's lease in PostgreSQL's
table, and the bridge container exits 0 on `podman stop` (SIGTERM).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.deploy.compose_podman import Project, Service, translate  # noqa: E402
from tests.interaction.processes import (  # noqa: E402
    TestkitProcess,
    java_executable,
    require_testkit_jar,
)

PYTHON_BASE = "localhost/mineclaw-debian-python:bookworm"
POSTGRES_BASE = "localhost/mineclaw-debian-postgresql:bookworm"
BASES = {
    PYTHON_BASE: "python3,python3-venv,ca-certificates",
    POSTGRES_BASE: "postgresql,ca-certificates",
}
PROJECT = "mineclaw-e2e"
# The flags that work on these machines (crun fails on hybrid cgroups; limits only lowered).
PODMAN = ["podman", "--cgroup-manager=cgroupfs", "--runtime", "runc"]
LIMITS = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"]
# What cannot come from a registry here (see the docstring).
OVERRIDES = {
    "minecraft": {"image": PYTHON_BASE, "command": ["sleep", "infinity"]},
    "postgres": {
        "image": "localhost/mineclaw-postgres:debian",
        "build": {"context": ".", "dockerfile": "postgres-debian.Dockerfile"},
    },
}
LINK_TIMEOUT_S = 300  # a hang guard only


def step(what: str, argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    print(f"== {what}: {' '.join(argv)}", flush=True)
    return subprocess.run(argv, check=True, text=True, **kwargs)  # type: ignore[call-overload]


def podman(*argv: str) -> str:
    done = subprocess.run([*PODMAN, *argv], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"podman {' '.join(argv)}: {done.stderr.strip()}")
    return done.stdout.strip()


def base_images() -> None:
    for image, packages in BASES.items():
        if subprocess.run([*PODMAN, "image", "exists", image]).returncode == 0:
            continue
        with tempfile.TemporaryDirectory() as scratch:
            rootfs = Path(scratch) / "rootfs.tar"
            step(f"a Debian root file system with {packages}", [
                "mmdebstrap", "--variant=minbase", f"--include={packages}", "bookworm",
                str(rootfs)])  # fmt: skip
            step("imported as a base image", [*PODMAN, "import", str(rootfs), image])


def pip_trust() -> list[str]:
    """Where the build's traffic passes a proxy with its own certificate authority, pip is
    given that bundle (PIP_CERT) read-only, never baked into the image."""
    bundle = os.environ.get("PIP_CERT") or os.environ.get("SSL_CERT_FILE")
    if bundle and Path(bundle).is_file():
        mounted = "/etc/host-ca.crt"
        return ["-v", f"{bundle}:{mounted}:ro", "--build-arg", f"PIP_CERT={mounted}"]
    return []


def down(project: Project) -> None:
    for service in reversed(project.services):
        subprocess.run([*PODMAN, "rm", "-f", "-t", "10", service.container], capture_output=True)
    subprocess.run([*PODMAN, "network", "rm", "-f", project.network], capture_output=True)
    for volume in project.volumes:
        subprocess.run([*PODMAN, "volume", "rm", "-f", volume], capture_output=True)


def up(project: Project) -> None:
    down(project)  # what an interrupted run left
    for service in project.services:
        if service.build is not None:
            build = [*PODMAN, service.build[0], "--network=host", *service.build[1:]]
            if service.name == "bridge":
                build[-1:-1] = pip_trust()
            step(f"the {service.name} image", build)
    podman("network", "create", project.network)
    for volume in project.volumes:
        podman("volume", "create", volume)
    by_name = {service.name: service for service in project.services}
    for service in project.services:
        for needed in service.healthy_first:
            wait_healthy(by_name[needed])
        run = [*PODMAN, service.run[0], *LIMITS, *service.run[1:]]
        step(f"the {service.name} service", run, capture_output=True)


def wait_healthy(service: Service) -> None:
    """As Compose waits on ``condition: service_healthy``: the healthcheck's test, run in the
    container every interval until it passes, at most ``retries`` times."""
    health = service.health
    if health is None:
        raise RuntimeError(f"{service.name} has no healthcheck to wait on")
    for attempt in range(1, health.retries + 1):
        done = subprocess.run([*PODMAN, "exec", service.container, *health.test])
        if done.returncode == 0:
            print(f"   {service.name} is healthy (check {attempt})", flush=True)
            return
        time.sleep(health.interval_s)  # the healthcheck's own interval, as Compose spaces them
    raise RuntimeError(f"{service.name} was not healthy after {health.retries} checks")


async def link_and_ask(project: Project, shared: Path) -> None:
    [minecraft] = [s.container for s in project.services if s.name == "minecraft"]
    pid = podman("inspect", "--format", "{{.State.Pid}}", minecraft)
    argv = ["nsenter", f"--target={pid}", "--net", "--", java_executable(), "-jar",
            str(require_testkit_jar()), "--url", "ws://127.0.0.1:25580/link",
            "--token-file", str(shared / "link.token")]  # fmt: skip
    print(f"== the testkit in the minecraft container's network: {' '.join(argv)}", flush=True)
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=ROOT, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    testkit = TestkitProcess(process)
    try:
        await testkit.wait_event(lambda e: e.get("event") == "ready")
        await testkit.wait_event(lambda e: e.get("event") == "link.up", timeout=LINK_TIMEOUT_S)
        print("   linked to the bridge in its container", flush=True)
        await testkit.send(
            {"op": "player.add", "name": "Steve", "permissions": ["mineclaw.command.chat"]}
        )
        await testkit.send({"op": "chat", "player": "Steve", "text": "@ai hello", "ref": "c1"})
        answer = await testkit.wait_event(
            lambda e: e.get("event") == "message" and e.get("to") == "Steve"
        )
        print(f"   Steve was told: {answer['text']}", flush=True)
        assert "not configured yet" in answer["text"], answer
        [postgres] = [s.container for s in project.services if s.name == "postgres"]
        query = "SELECT server_id FROM mineclaw_server_leases"
        leases = podman("exec", postgres, "psql", "-h", "/tmp", "-U", "mineclaw", "-d",
                        "mineclaw", "-Atc", query)  # fmt: skip
        assert leases, "the bridge holds no lease in PostgreSQL"
        print(f"   PostgreSQL holds the lease of server {leases}", flush=True)
    finally:
        await testkit.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", action="store_true", help="leave the containers running")
    args = parser.parse_args(argv)
    for tool in ("podman", "runc", "mmdebstrap", "nsenter"):
        if shutil.which(tool) is None:
            print(
                f"{tool} is not installed: apt-get install podman runc mmdebstrap", file=sys.stderr
            )
            return 1
    base_images()
    with tempfile.TemporaryDirectory(prefix="mineclaw-compose-") as scratch:
        folder = Path(scratch)
        shared = folder / "data" / "plugins" / "Mineclaw"
        shared.mkdir(parents=True)
        (folder / "plugins").mkdir()
        # As docker/README.md says: the folders exist, owned by the servers' UID 1000.
        for path in (folder / "data", folder / "data" / "plugins", shared, folder / "plugins"):
            os.chown(path, 1000, 1000)
        shutil.copy2(ROOT / "docker" / "bridge-first-start.sh", folder / "bridge-first-start.sh")
        variables = {"MINECLAW_DB_PASSWORD": os.urandom(12).hex()}
        project = translate(
            ROOT / "docker" / "compose.yaml", folder, variables, project=PROJECT,
            overrides=OVERRIDES, build_args={"bridge": {"PYTHON_IMAGE": PYTHON_BASE}},
        )  # fmt: skip
        try:
            up(project)
            asyncio.run(link_and_ask(project, shared))
            config = (shared / "config.yml").read_text(encoding="utf-8")
            assert "backend: postgresql" in config, "the first start did not set the storage"
            [bridge] = [s.container for s in project.services if s.name == "bridge"]
            podman("stop", "-t", "30", bridge)
            code = podman("inspect", "--format", "{{.State.ExitCode}}", bridge)
            print(f"   the bridge container stopped on SIGTERM with exit code {code}", flush=True)
            print("   its last lines:\n" + podman("logs", "--tail", "8", bridge), flush=True)
            assert code == "0", code
        finally:
            if not args.keep:
                down(project)
    print("== compose e2e: passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
