"""``workspace/memory/*.md``: server memories the owner writes, read with the workspace.

Each file is Markdown. Every list item (``-``, ``*`` or ``1.``, with its indented continuation
lines) and every paragraph is one server memory; headings and HTML comments are not. A memory
longer than ``memory.max_chars``, or a file past the limits, is a problem naming the file and
line, and the folder is refused like any other (``validate`` lists it; a reload keeps the old
configuration). The bridge makes the store's ``workspace`` memories exactly these at start and
on every reload (`bridge.memory.store.MemoryStore.replace_source`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from bridge.control.files import read_regular_file
from bridge.control.problems import ConfigLoadError, Problem
from bridge.control.workspace_files import WORKSPACE_DIR, file_text, is_real_directory

MEMORY_DIR = "memory"
MAX_MEMORY_FILES = 64
MAX_MEMORY_FILE_BYTES = 64 * 1024
MAX_NOTES = 2000

_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")


@dataclass(frozen=True, slots=True)
class MemoryNote:
    """One server memory as the owner wrote it: the file and line it starts on, its text."""

    file: str
    line: int
    text: str


def load_memory_notes(
    config_dir: Path, max_chars: int
) -> tuple[tuple[MemoryNote, ...], list[Problem]]:
    """Every note of ``workspace/memory/*.md`` in file-name order, and every problem."""
    problems: list[Problem] = []
    directory = config_dir / WORKSPACE_DIR / MEMORY_DIR
    label_dir = f"{WORKSPACE_DIR}/{MEMORY_DIR}"
    if not is_real_directory(directory, label_dir, problems, required=False):
        return (), problems
    names = sorted(entry.name for entry in os.scandir(directory) if entry.name.endswith(".md"))
    if len(names) > MAX_MEMORY_FILES:
        message = f"more than {MAX_MEMORY_FILES} memory files"
        problems.append(Problem(label_dir, None, None, "", message))
        names = names[:MAX_MEMORY_FILES]
    notes: list[MemoryNote] = []
    for name in names:
        label = f"{label_dir}/{name}"
        try:
            data = read_regular_file(directory / name, label=label, max_bytes=MAX_MEMORY_FILE_BYTES)
        except ConfigLoadError as exc:
            problems.extend(exc.problems)
            continue
        if data is None:
            continue  # removed while listing
        try:
            text = file_text(data, label)
        except ConfigLoadError as exc:
            problems.extend(exc.problems)
            continue
        for note in notes_of(text, label):
            if len(note.text) > max_chars:
                message = (
                    f"a memory of {len(note.text)} characters; at most {max_chars}"
                    " (memory.max_chars)"
                )
                problems.append(Problem(label, note.line, 1, "", message))
                continue
            notes.append(note)
    if len(notes) > MAX_NOTES:
        problems.append(Problem(label_dir, None, None, "", f"more than {MAX_NOTES} memories"))
    return tuple(notes[:MAX_NOTES]), problems


def notes_of(text: str, label: str) -> list[MemoryNote]:
    """The notes of one file's text: list items and paragraphs, whitespace folded."""
    notes: list[MemoryNote] = []
    current: list[str] = []
    start = 0
    in_comment = False

    def close() -> None:
        if current:
            joined = " ".join(" ".join(current).split())
            if joined:
                notes.append(MemoryNote(label, start, joined))
            current.clear()

    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if in_comment or stripped.startswith("<!--"):
            close()
            in_comment = "-->" not in stripped
            continue
        if not stripped or _HEADING.match(line):
            close()
            continue
        item = _ITEM.match(line)
        if item is not None:
            close()
            start = number
            current.append(item.group(1))
            continue
        if not current:
            start = number
        current.append(stripped)
    close()
    return notes
