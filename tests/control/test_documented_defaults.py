"""docs/configuration.md against the code: every field and `message.yml` key is documented, and
every documented default is the code's own default.

When this fails after you added or changed a setting, the message names the file, the field and
the code's default: add or fix that row in the file's table in docs/configuration.md.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from bridge.control.config_file import ConfigFile
from bridge.control.messages_file import PLACEHOLDERS, MessagesFile
from bridge.control.never_categories import default_categories
from bridge.control.providers import ProvidersFile
from bridge.control.servers_file import ServersFile
from bridge.control.tools_file import ToolSpec
from bridge.control.whitelist_file import WhitelistFile

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
REQUIRED = "(required)"
# Defaults the table describes in words; each is checked by its own test below.
DESCRIBED: dict[tuple[str, str], str] = {}

# The models behind each file's table; tools.yml rows name fields of one `tools.<name>` entry.
FILES: dict[str, type[BaseModel]] = {
    "config.yml": ConfigFile,
    "providers.yml": ProvidersFile,
    "whitelist.yml": WhitelistFile,
    "tools.yml": ToolSpec,
    "servers.yml": ServersFile,
}
# Mappings whose keys the owner chooses, and how the table writes such a key.
NAMED_KEYS = {
    "providers": "<id>",
    "models": "<ref>",
    "tiers": "<tier>",
    "servers": "<id>",
    "tools": "<tool>",
}


@dataclass(frozen=True)
class Leaf:
    path: str
    info: FieldInfo
    optional_section: bool  # inside a section that is absent by default


def _unwrap(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def _model(annotation: Any) -> type[BaseModel] | None:
    inner = _unwrap(annotation)
    return inner if isinstance(inner, type) and issubclass(inner, BaseModel) else None


def leaves(model: type[BaseModel], prefix: str = "", optional: bool = False) -> Iterator[Leaf]:
    for name, info in model.model_fields.items():
        key = info.alias or name
        path = prefix + key
        section = _model(info.annotation)
        if section is not None:
            absent = not info.is_required() and info.get_default(call_default_factory=True) is None
            yield from leaves(section, path + ".", optional or absent)
            continue
        inner = _unwrap(info.annotation)
        if key in NAMED_KEYS and typing.get_origin(inner) is dict:
            value = _model(typing.get_args(inner)[1])
            if value is not None:
                yield from leaves(value, f"{path}.{NAMED_KEYS[key]}.", optional)
                continue
        yield Leaf(path, info, optional)


def doc_tables() -> dict[str, dict[str, list[str]]]:
    """For each file heading ("## `config.yml`"), its table rows: field -> the other cells."""
    tables: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        heading = re.fullmatch(r"## `([\w.]+)`", line)
        if heading:
            current = tables.setdefault(heading.group(1), {})
            continue
        if line.startswith("## "):
            current = None
            continue
        row = re.fullmatch(r"\| `([^`]+)` \|(.*)\|", line)
        if current is not None and row:
            current[row.group(1)] = [cell.strip() for cell in row.group(2).split(" | ")]
    return tables


TABLES = doc_tables()


def documented_default(cell: str) -> Any:
    if cell == REQUIRED:
        return REQUIRED
    if cell == "none":
        return None
    if cell in ("true", "false"):
        return cell == "true"
    if cell == "empty (no key)":
        return ""
    if re.fullmatch(r"-?\d+", cell):
        return int(cell)
    if re.fullmatch(r"-?\d+\.\d+", cell):
        return float(cell)
    quoted = re.fullmatch(r"`(.*)`", cell)
    if quoted:
        text = quoted.group(1)
        # A flow list or mapping (`[]`, `[80, 443]`) is read as YAML, as config.yml would.
        return yaml.safe_load(text) if text[:1] in ("[", "{") else text
    return cell


def code_default(leaf: Leaf) -> Any:
    if leaf.info.is_required():
        return None if leaf.optional_section else REQUIRED
    value = leaf.info.get_default(call_default_factory=True)
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, list | tuple) and value and isinstance(value[0], BaseModel):
        return [item.model_dump() for item in value]
    return value


CASES = [(file, leaf) for file, model in FILES.items() for leaf in leaves(model)]


@pytest.mark.parametrize(("file", "leaf"), CASES, ids=[f"{f}:{leaf.path}" for f, leaf in CASES])
def test_every_field_is_documented_with_the_code_default(file: str, leaf: Leaf) -> None:
    expected = code_default(leaf)
    shown = "(required)" if expected == REQUIRED else yaml.safe_dump(expected).strip()
    row = TABLES.get(file, {}).get(leaf.path)
    assert row is not None, (
        f"{file} field `{leaf.path}` (default {shown}) is missing from docs/configuration.md: "
        f"add a row `| \\`{leaf.path}\\` | {shown} | range | meaning |` to the {file} table"
    )
    cell = row[0]
    if (file, leaf.path) in DESCRIBED:
        assert cell == DESCRIBED[(file, leaf.path)]
        return
    assert documented_default(cell) == expected, (
        f"docs/configuration.md documents {file} `{leaf.path}` with default {cell!r}, "
        f"but the code's default is {shown}: fix the row (or the code)"
    )


def test_every_documented_field_exists_in_the_code() -> None:
    for file, model in FILES.items():
        known = {leaf.path for leaf in leaves(model)}
        stale = sorted(set(TABLES.get(file, {})) - known)
        assert not stale, f"docs/configuration.md documents {file} fields the code lacks: {stale}"


def message_keys() -> list[tuple[str, str]]:
    keys = []
    for section, info in MessagesFile.model_fields.items():
        model = _model(info.annotation)
        if model is None:
            continue
        for key, field in model.model_fields.items():
            keys.append((f"{info.alias or section}.{key}", str(field.default)))
    return keys


@pytest.mark.parametrize(("key", "default"), message_keys(), ids=lambda v: str(v)[:40])
def test_every_message_key_is_documented_with_its_default_and_placeholders(
    key: str, default: str
) -> None:
    row = TABLES["message.yml"].get(key)
    assert row is not None, (
        f"message.yml key `{key}` is missing from the message.yml table of "
        f"docs/configuration.md: add `| \\`{key}\\` | placeholders | \\`{default}\\` |`"
    )
    placeholders, cell = row[0], row[-1]
    assert cell == f"`{default}`", (
        f"docs/configuration.md shows message.yml `{key}` as {cell}, but its default is `{default}`"
    )
    allowed, required = PLACEHOLDERS[key]
    bold = " ".join(re.findall(r"\*\*(.*?)\*\*", placeholders))
    assert set(re.findall(r"<(\w+)>", placeholders)) == set(allowed), (key, placeholders)
    assert set(re.findall(r"<(\w+)>", bold)) == set(required), (key, placeholders)


def test_no_documented_message_key_is_stale() -> None:
    known = {key for key, _ in message_keys()}
    assert not sorted(set(TABLES["message.yml"]) - known)


def test_the_never_categories_in_the_docs_are_the_built_in_ones() -> None:
    text = DOC.read_text(encoding="utf-8").split("## `whitelist.yml`", 1)[1].split("\n## ", 1)[0]
    for name, category in default_categories().items():
        assert f"`{name}`" in text, f"never category `{name}` is not documented"
        for command in category.commands[:2]:
            assert f"`{command}`" in text, f"never category {name}: `{command}` is not documented"
