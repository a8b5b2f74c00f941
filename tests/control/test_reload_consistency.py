"""A reload reads a consistent folder: a file rewritten in place while reloads run never
yields a plane nobody wrote, and a folder that keeps changing is refused, the old plane kept."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from bridge.control import ConfigLoadError, ControlPlaneStore

VERSIONS = 12
RULES_PER_VERSION = 6


def whitelist(version: int) -> bytes:
    # Cut anywhere, a version loses rules (or its YAML breaks): no cut of one is another one.
    rules = "".join(f"  - 'say v{version} rule {i}'\n" for i in range(RULES_PER_VERSION))
    return f"schema: 1\nplayer:\n{rules}".encode()


def expected_rules(version: int) -> tuple[str, ...]:
    return tuple(f"say v{version} rule {i}" for i in range(RULES_PER_VERSION))


def rewrite_in_place(path: Path, data: bytes, pieces: int, pause_s: float) -> None:
    """The way a careless editor saves: truncate, then write the file in pieces of whole
    lines, so a reader in between sees valid YAML with fewer rules, not a syntax error."""
    lines = data.splitlines(keepends=True)
    step = len(lines) // pieces + 1
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        for start in range(0, len(lines), step):
            os.write(fd, b"".join(lines[start : start + step]))
            time.sleep(pause_s)  # a pause mid-save, where a reader sees half a file
    finally:
        os.close(fd)


def test_every_published_plane_is_one_that_was_written(config_dir: Path) -> None:
    path = config_dir / "whitelist.yml"
    path.write_bytes(whitelist(0))
    store = ControlPlaneStore(config_dir, environ={})
    written = {expected_rules(v) for v in range(VERSIONS)}
    published: list[tuple[str, ...]] = []
    refused: list[str] = []
    done = threading.Event()

    def writer() -> None:
        try:
            for version in range(1, VERSIONS):
                rewrite_in_place(path, whitelist(version), pieces=3, pause_s=0.005)
                time.sleep(0.2)  # the owner reads what they saved, then saves again
        finally:
            done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        while not done.is_set():
            try:
                published.append(tuple(store.reload().whitelist_file.player))
            except ConfigLoadError as exc:
                refused.append(str(exc))
    finally:
        thread.join(timeout=60)
    assert not thread.is_alive()
    strangers = [rules for rules in published if rules not in written]
    assert strangers == [], f"{len(strangers)} of {len(published)} reloads published a mix"
    # Once the saves stop, the last version is what a reload publishes.
    assert tuple(store.reload().whitelist_file.player) == expected_rules(VERSIONS - 1)


def test_a_folder_that_keeps_changing_is_refused_and_the_old_plane_stays(
    config_dir: Path,
) -> None:
    path = config_dir / "whitelist.yml"
    path.write_bytes(whitelist(0))
    store = ControlPlaneStore(config_dir, environ={})
    before = store.current
    stop = threading.Event()

    def writer() -> None:
        version = 0
        while not stop.is_set():
            version += 1
            rewrite_in_place(path, whitelist(version % VERSIONS), pieces=2, pause_s=0)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        with pytest.raises(ConfigLoadError) as caught:
            store.reload()
    finally:
        stop.set()
        thread.join(timeout=60)
    [problem] = caught.value.problems
    assert problem.file == "whitelist.yml"
    assert "kept changing while the folder was read" in problem.message
    assert "renaming" in problem.message
    assert store.current is before
    assert tuple(store.current.whitelist_file.player) == expected_rules(0)
