"""docker/bridge.Dockerfile: a structural lint (no Docker engine runs on these machines)."""

from __future__ import annotations

import tomllib

import pytest

from .files import DOCKER, DOCKERFILE, ROOT, load_yaml, parse_dockerfile
from .rules import dockerfile_problems


def _python_version() -> str:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    requires = pyproject["project"]["requires-python"]
    assert requires.startswith(">="), requires
    return str(requires[2:])


def test_the_dockerfile_follows_every_rule() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert dockerfile_problems(text, ROOT, _python_version()) == []


def test_the_image_serves_the_folder_compose_mounts() -> None:
    cmd = [
        item
        for item in parse_dockerfile(DOCKERFILE.read_text(encoding="utf-8"))
        if item.keyword == "CMD"
    ][-1]
    bridge = load_yaml(DOCKER / "compose.yaml")["services"]["bridge"]
    # --init: on first start the plugin's folder holds none of the bridge's files yet.
    assert cmd.argument == '["serve", "--init", "--config", "/config"]'
    assert bridge["command"] == ["serve", "--init", "--config", "/config"]
    assert any(str(volume).endswith(":/config") for volume in bridge["volumes"])


def test_the_dockerignore_lets_in_what_the_build_copies() -> None:
    ignore = (DOCKER / "bridge.Dockerfile.dockerignore").read_text(encoding="utf-8").splitlines()
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    copied = set()
    for item in parse_dockerfile(DOCKERFILE.read_text(encoding="utf-8")):
        if item.keyword == "COPY" and not item.argument.startswith("--from"):
            copied.update(item.argument.split()[:-1])
    assert copied and copied <= allowed, (copied, allowed)
    assert "*" in ignore, "everything the build does not copy stays out of the context"


BROKEN = {
    "runs as root": ("USER 1000:1000", "USER root", "non-root USER"),
    "exposes the link": ("ENV PYTHONUNBUFFERED=1", "EXPOSE 25580", "EXPOSE"),
    "shell-form entrypoint": (
        'ENTRYPOINT ["mineclaw-bridge"]',
        "ENTRYPOINT mineclaw-bridge",
        "exec",
    ),
    "no serve": ('CMD ["serve", "--init", "--config", "/config"]', 'CMD ["status"]', "CMD"),
    "missing source": ("COPY bridge ./bridge", "COPY bridges ./bridge", "bridges does not exist"),
    "other python": ("PYTHON_IMAGE=python:3.11-slim\n", "PYTHON_IMAGE=python:3.9\n", "3.11"),
    "other runtime image": ("FROM ${PYTHON_IMAGE}\n", "FROM python:3.9-slim\n", "python:3.11"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_each_rule_catches_its_breakage(case: str) -> None:
    old, new, expected = BROKEN[case]
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert old in text, f"the sample no longer contains {old!r}"
    broken = text.replace(old, new)
    problems = dockerfile_problems(broken, ROOT, _python_version())
    assert any(expected in problem for problem in problems), problems


def test_the_parser_joins_continuations_and_names_bad_lines() -> None:
    parsed = parse_dockerfile("# c\nRUN a \\\n  # inside\n  && b\nuser 1000\n")
    assert [(item.keyword, item.argument, item.line) for item in parsed] == [
        ("RUN", "a && b", 2),
        ("USER", "1000", 5),
    ]
    with pytest.raises(ValueError, match="line 1"):
        parse_dockerfile("RUN a \\\n")
    with pytest.raises(ValueError, match="line 2: '--x'"):
        parse_dockerfile("FROM x\n--x y\n")
