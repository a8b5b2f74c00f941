"""The Paper adapter stays thin and within the snapshot and scheduling rules (a source scan).

The adapter cannot run here (no server), so these checks read its sources and pom: calls that
would break Folia's thread rules, load chunks, read NBT or tile entities, or parse MiniMessage
outside the core must not appear, and the jar must bundle nothing Paper already provides.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from .files import PAPER, PAPER_POM, PARENT_POM

SOURCES = PAPER / "src" / "main" / "java"
POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}

# Each forbidden pattern with the rule it would break.
FORBIDDEN = {
    r"(Bukkit|server|getServer\(\))\.getScheduler|BukkitRunnable|runTask": "not Folia-safe",
    r"\bloadChunk\b|\bgetChunkAt\b|\bgetChunk\(": "a snapshot must never load a chunk",
    r"rayTrace|getTargetBlock": "the ray trace must go through the core's SightLine",
    r"PersistentDataContainer|\bNBT|getState\(\)|BookMeta|\bSign\b": "no NBT, PDC or tile data",
    r"MiniMessage|LegacyComponentSerializer|\u00a7": "rendering is the core's restricted renderer",
}


def _sources() -> list[Path]:
    return sorted(SOURCES.rglob("*.java"))


def problems_in(text: str, name: str) -> list[str]:
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        code = line.split("//")[0]
        if code.lstrip().startswith("*"):
            continue  # Javadoc prose may name what the code avoids
        for pattern, rule in FORBIDDEN.items():
            if re.search(pattern, code):
                found.append(f"{name}:{number}: {rule}: {line.strip()}")
    return found


def test_the_adapter_has_sources() -> None:
    assert {path.name for path in _sources()} >= {"MineclawPlugin.java", "PaperPlatform.java"}


@pytest.mark.parametrize("path", _sources(), ids=lambda path: path.name)
def test_no_forbidden_call(path: Path) -> None:
    assert problems_in(path.read_text(encoding="utf-8"), path.name) == []


@pytest.mark.parametrize(
    "line",
    [
        "Bukkit.getScheduler().runTask(plugin, task);",
        "this.server.getScheduler().scheduleSyncDelayedTask(plugin, task);",
        "world.getChunkAt(x, z);",
        "player.getTargetBlockExact(5);",
        "item.getItemMeta().getPersistentDataContainer();",
        "MiniMessage.miniMessage().deserialize(text);",
    ],
)
def test_the_scan_catches_each_kind_of_call(line: str) -> None:
    assert problems_in(f"class X {{\n    {line}\n}}\n", "X.java") != []


def test_only_the_core_is_bundled_and_paper_api_is_provided() -> None:
    pom = ElementTree.parse(PAPER_POM).getroot()
    includes = [node.text for node in pom.iterfind(".//m:artifactSet/m:includes/m:include", POM_NS)]
    assert includes == ["dev.mineclaw:mineclaw-core"]
    scopes = {
        dep.findtext("m:artifactId", namespaces=POM_NS): dep.findtext("m:scope", namespaces=POM_NS)
        for dep in pom.iterfind("m:dependencies/m:dependency", POM_NS)
    }
    assert scopes == {"paper-api": "provided", "mineclaw-core": None}


def test_the_jar_is_java_21_bytecode_so_paper_1_21_loads_it() -> None:
    # Paper 1.21.x runs on Java 21 and cannot load classes compiled for 25.
    parent = ElementTree.parse(PARENT_POM).getroot()
    assert parent.findtext("m:properties/m:maven.compiler.release", namespaces=POM_NS) == "21"
    for pom in (PAPER_POM, PARENT_POM.parent / "core" / "pom.xml"):
        release = (
            ElementTree.parse(pom).getroot().find("m:properties/m:maven.compiler.release", POM_NS)
        )
        assert release is None, f"{pom} overrides the Java release"
