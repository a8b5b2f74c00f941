"""Builds the bridge image with podman and links the testkit JVM to the bridge in it.

Not part of `make test` (CI has no container engine; installing one would cost more than the
suite's budget): run it by hand where podman, runc and mmdebstrap are installed
(`apt-get install podman runc mmdebstrap`), from the repository root after `make java`:

    python docker/podman_e2e.py

No registry is reached: the base image is built from Debian's packages (mmdebstrap, then
`podman import`) unless it exists already; the image build downloads the bridge's dependencies
from the package index (pip) with the host's network. The container runs with
--network=host, so the testkit on this machine reaches the bridge's loopback link.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.interaction.processes import TestkitProcess, _Output, free_port  # noqa: E402

BASE = "localhost/mineclaw-debian-python:bookworm"
IMAGE = "localhost/mineclaw-bridge:e2e"
# The flags that work on these machines (crun fails on hybrid cgroups; limits only lowered).
PODMAN = ["podman", "--cgroup-manager=cgroupfs", "--runtime", "runc"]
LIMITS = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"]


def step(what: str, argv: list[str]) -> None:
    print(f"== {what}: {' '.join(argv)}", flush=True)
    subprocess.run(argv, check=True)


def base_image() -> None:
    present = subprocess.run([*PODMAN, "image", "exists", BASE]).returncode == 0
    if present:
        return
    with tempfile.TemporaryDirectory() as scratch:
        rootfs = Path(scratch) / "rootfs.tar"
        step("a Debian root file system with Python", [
            "mmdebstrap", "--variant=minbase", "--include=python3,python3-venv,ca-certificates",
            "bookworm", str(rootfs)])  # fmt: skip
        step("imported as the base image", [*PODMAN, "import", str(rootfs), BASE])


async def link_through_container(config: Path) -> None:
    port = free_port()
    run = [*PODMAN, "run", "--rm", "--network=host", *LIMITS, "-v", f"{config}:/config:Z",
           IMAGE, "serve", "--init", "--config", "/config", "--port", str(port)]  # fmt: skip
    print(f"== the bridge in its container: {' '.join(run)}", flush=True)
    bridge = await asyncio.create_subprocess_exec(
        *run, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    assert bridge.stdout is not None and bridge.stderr is not None
    out, err = _Output(bridge.stdout), _Output(bridge.stderr)
    testkit = None
    try:
        listening = await out.wait_for(r"^listening on (ws://\S+)$", timeout=120)
        print(f"   {listening.group(0)}", flush=True)
        testkit = await TestkitProcess.start(listening.group(1), config / "link.token")
        await testkit.wait_event(lambda e: e.get("event") == "link.up")
        print("   the testkit linked to the bridge in the container", flush=True)
        await testkit.send(
            {"op": "player.add", "name": "Steve", "permissions": ["mineclaw.command.chat"]}
        )
        await testkit.send({"op": "chat", "player": "Steve", "text": "@ai hello", "ref": "c1"})
        answer = await testkit.wait_event(
            lambda e: e.get("event") == "message" and e.get("to") == "Steve"
        )
        print(f"   Steve was told: {answer['text']}", flush=True)
    finally:
        if testkit is not None:
            await testkit.shutdown()
        bridge.terminate()
        code = await asyncio.wait_for(bridge.wait(), 60)
        print(f"   the container stopped on SIGTERM with exit code {code}", flush=True)
        print("   its stderr:\n" + err.tail(10), flush=True)
        await out.close()
        await err.close()


def main() -> int:
    for tool in ("podman", "runc", "mmdebstrap"):
        if shutil.which(tool) is None:
            print(
                f"{tool} is not installed: apt-get install podman runc mmdebstrap", file=sys.stderr
            )
            return 1
    base_image()
    # A machine whose traffic goes through a proxy with its own certificate authority tells
    # pip so (PIP_CERT); the image's build is given the same bundle, read-only, not baked in.
    trust = []
    bundle = os.environ.get("PIP_CERT") or os.environ.get("SSL_CERT_FILE")
    if bundle and Path(bundle).is_file():
        mounted = "/etc/host-ca.crt"
        trust = ["-v", f"{bundle}:{mounted}:ro", "--build-arg", f"PIP_CERT={mounted}"]
    build = [*PODMAN, "build", "--network=host", *trust, "--build-arg", f"PYTHON_IMAGE={BASE}"]
    step("the bridge image", [*build, "-f", "docker/bridge.Dockerfile", "-t", IMAGE, str(ROOT)])
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "Mineclaw"
        config.mkdir()
        os.chown(config, 1000, 1000)  # the image's user writes link.token and the defaults
        asyncio.run(link_through_container(config))
    return 0


if __name__ == "__main__":
    sys.exit(main())
