"""The workspace file tools: ``list``, ``read`` and ``grep``, confined to ``workspace/``.

Every path goes through ``workspace_paths`` (component by component, no-follow, relative to a
descriptor of the workspace). Results carry only workspace-relative paths. Each operation is
synchronous and bounded: by ``max_results`` and ``max_read_chars`` for its output, by
``max_depth`` for how far it walks, and by a ``Budget`` for time and cancellation, which it
checks between files and between bounded pieces of text (a long line is searched in windows)
and reports as ``timed_out`` instead of running on.

Redact, then cut: a file's text is redacted as a whole before anything is taken from it. ``read``
offsets and ``grep`` lines, windows and matches are all over the redacted text, so no offset
starts inside a secret and no pattern can test a guess at one.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import re2

from bridge.control.files import read_at_most
from bridge.redaction import Redactor, complete_words
from bridge.regex_errors import re2_error_text
from bridge.tools import workspace_paths as paths
from bridge.tools.results import ErrorCode, ToolFailure
from bridge.tools.workspace_paths import Budget
from bridge.unicode_text import plain_lines

# A file is read at most this far; longer ones are reported as truncated.
MAX_SCAN_BYTES = 4 * 1024 * 1024
BINARY_PROBE_BYTES = 8192
GREP_LINE_CHARS = 240
GREP_CONTEXT_BEFORE = 60
# A line longer than this is searched in windows of this many bytes, the time budget checked
# between them; windows overlap, so a match up to GREP_WINDOW_OVERLAP bytes long is always found.
GREP_WINDOW_BYTES = 16 * 1024
GREP_WINDOW_OVERLAP = 2 * 1024
_LINES_PER_BUDGET_CHECK = 256


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkspaceLimits:
    """Bounds of the file tools; the defaults match ``config.yml``'s ``workspace`` section."""

    max_read_chars: int = 20_000
    max_results: int = 100
    max_depth: int = 8
    timeout_ms: int = 2000


class Workspace:
    """The file tools over one folder (``<config>/workspace``)."""

    def __init__(
        self,
        directory: Path,
        *,
        limits: WorkspaceLimits | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.limits = limits or WorkspaceLimits()
        self.redactor = redactor or Redactor()

    def budget(self) -> Budget:
        return Budget.of(self.limits.timeout_ms / 1000)

    def list_folder(self, path: str = "", *, depth: int = 1, budget: Budget) -> dict[str, Any]:
        """Entries below ``path``, ``depth`` folders deep, sorted, with types and sizes."""
        parts = paths.split_path(path, max_depth=self.limits.max_depth)
        depth = max(1, min(depth, self.limits.max_depth - len(parts)))
        entries: list[dict[str, Any]] = []
        state = {"truncated": False, "timed_out": False}
        root = paths.open_root(self.directory)
        try:
            start = paths.open_directory(root, parts)
        finally:
            os.close(root)
        try:
            self._list_into(start, _prefix(parts), depth, entries, state, budget)
        finally:
            os.close(start)
        return {"path": "/".join(parts) or ".", "entries": entries, **state}

    def _list_into(
        self,
        fd: int,
        prefix: str,
        depth: int,
        entries: list[dict[str, Any]],
        state: dict[str, bool],
        budget: Budget,
    ) -> None:
        for name in sorted(os.listdir(fd)):
            if budget.exhausted():
                state["timed_out"] = True
                return
            if len(entries) >= self.limits.max_results:
                state["truncated"] = True
                return
            shown = prefix + name
            try:
                mode_info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue  # removed while listing
            kind = _entry_kind(mode_info.st_mode)
            entry: dict[str, Any] = {"path": shown, "type": kind}
            if kind == "file":
                entry["size"] = mode_info.st_size
            entries.append(entry)
            if kind == "folder" and depth > 1:
                try:
                    child = paths.open_child_directory(fd, name, shown)
                except ToolFailure:
                    continue  # swapped for a link or removed since the listing: not entered
                try:
                    self._list_into(child, shown + "/", depth - 1, entries, state, budget)
                finally:
                    os.close(child)
                if state["truncated"] or state["timed_out"]:
                    return

    def read_file(self, path: str, *, offset: int = 0, budget: Budget) -> dict[str, Any]:
        """Up to ``max_read_chars`` characters of a text file from character ``offset``."""
        parts = paths.split_path(path, max_depth=self.limits.max_depth)
        root = paths.open_root(self.directory)
        try:
            fd, info = paths.open_file(root, parts)
        finally:
            os.close(root)
        try:
            text, cut = _read_text(fd, "/".join(parts), self.redactor)
        finally:
            os.close(fd)
        if budget.exhausted():
            raise ToolFailure(ErrorCode.TIMEOUT, "the read did not finish in time")
        end = offset + self.limits.max_read_chars
        chunk = text[offset:end]
        more = end < len(text)
        return {
            "path": "/".join(parts),
            "size": info.st_size,
            "offset": offset,
            "text": chunk,
            "next_offset": end if more else None,
            "truncated": more or cut,
        }

    def grep(self, pattern: str, path: str = "", *, budget: Budget) -> dict[str, Any]:
        """Lines matching the RE2 ``pattern`` in the text files below ``path``."""
        options = re2.Options()
        options.log_errors = False  # a costly pattern is the model's problem, not the log's
        try:
            regexp = re2.compile(pattern, options)
        except re2.error as exc:
            raise ToolFailure(
                ErrorCode.INVALID_ARGUMENTS,
                f"pattern is not a valid RE2 regular expression ({re2_error_text(exc)}); "
                "escape special characters to search for them literally",
            ) from None
        parts = paths.split_path(path, max_depth=self.limits.max_depth)
        search = _Search(regexp, self.limits, budget, self.redactor)
        root = paths.open_root(self.directory)
        try:
            try:
                start = paths.open_directory(root, parts)
            except ToolFailure as exc:
                if exc.code is not ErrorCode.NOT_A_DIRECTORY:
                    raise
                fd, _ = paths.open_file(root, parts)
                try:
                    search.file(fd, "/".join(parts))
                finally:
                    os.close(fd)
            else:
                try:
                    search.folder(start, _prefix(parts), self.limits.max_depth - len(parts))
                finally:
                    os.close(start)
        finally:
            os.close(root)
        return search.report(pattern, "/".join(parts) or ".")


class _Search:
    def __init__(
        self, regexp: Any, limits: WorkspaceLimits, budget: Budget, redactor: Redactor
    ) -> None:
        self.regexp = regexp
        self.limits = limits
        self.budget = budget
        self.redactor = redactor
        self.unchecked_chars = 0
        self.matches: list[dict[str, Any]] = []
        self.chars = 0
        self.files_searched = 0
        self.files_skipped = 0
        self.truncated = False
        self.timed_out = False

    def stopped(self) -> bool:
        if self.truncated or self.timed_out:
            return True
        if self.budget.exhausted():
            self.timed_out = True
        return self.timed_out

    def folder(self, fd: int, prefix: str, depth_left: int) -> None:
        for name in sorted(os.listdir(fd)):
            if self.stopped():
                return
            shown = prefix + name
            try:
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            except OSError:
                continue
            try:
                if stat.S_ISDIR(mode) and depth_left > 1:
                    child = paths.open_child_directory(fd, name, shown)
                    try:
                        self.folder(child, shown + "/", depth_left - 1)
                    finally:
                        os.close(child)
                elif stat.S_ISREG(mode):
                    child, _ = paths.open_child_file(fd, name, shown)
                    try:
                        self.file(child, shown)
                    finally:
                        os.close(child)
                else:
                    self.files_skipped += 1
            except ToolFailure:
                self.files_skipped += 1  # a link, a special file or a hard link: not searched

    def file(self, fd: int, shown: str) -> None:
        try:
            text, _ = _read_text(fd, shown, self.redactor)
        except ToolFailure:
            self.files_skipped += 1
            return
        self.files_searched += 1
        for number, line in enumerate(text.splitlines(), start=1):
            # The budget is checked every so many lines and every window's worth of text, so
            # neither many short lines nor one long one can run past it by much.
            self.unchecked_chars += len(line)
            due = number % _LINES_PER_BUDGET_CHECK == 0 or self.unchecked_chars >= GREP_WINDOW_BYTES
            if due:
                self.unchecked_chars = 0
                if self.stopped():
                    return
            found = self.search_line(line)
            if found is None:
                if self.timed_out:
                    return
                continue
            if len(self.matches) >= self.limits.max_results:
                self.truncated = True
                return
            start = max(0, found - GREP_CONTEXT_BEFORE) if len(line) > GREP_LINE_CHARS else 0
            excerpt = line[start : start + GREP_LINE_CHARS]
            self.chars += len(excerpt) + len(shown)
            if self.chars > self.limits.max_read_chars:
                self.truncated = True
                return
            self.matches.append({"path": shown, "line": number, "text": excerpt})

    def search_line(self, line: str) -> int | None:
        """Where the first match in ``line`` starts (in characters), or None. A long line is
        searched window by window with the budget checked between windows: one RE2 search over
        megabytes with a costly pattern takes seconds, and RE2 cannot be interrupted."""
        if len(line) <= GREP_WINDOW_BYTES:
            match = self.regexp.search(line)
            return None if match is None else int(match.start())
        data = line.encode("utf-8")
        start = 0
        while start < len(data):
            end = _char_boundary(data, start + GREP_WINDOW_BYTES + GREP_WINDOW_OVERLAP)
            # Searched in place: RE2 sees the whole line as context, so ^, $ and \b keep their
            # meaning at a window's edges.
            match = self.regexp.search(data, start, end)
            if match is not None:
                return len(data[: match.start()].decode("utf-8"))
            if end >= len(data):
                return None
            if self.budget.exhausted():
                self.timed_out = True
                return None
            start = _char_boundary(data, start + GREP_WINDOW_BYTES)
        return None

    def report(self, pattern: str, path: str) -> dict[str, Any]:
        return {
            "pattern": pattern,
            "path": path,
            "matches": self.matches,
            "files_searched": self.files_searched,
            "files_skipped": self.files_skipped,
            "truncated": self.truncated,
            "timed_out": self.timed_out,
        }


def _read_text(fd: int, shown: str, redactor: Redactor) -> tuple[str, bool]:
    """The file's text, redacted as a whole, and whether it was cut at ``MAX_SCAN_BYTES``.

    A cut file loses its last, torn word before redaction: a secret cut in half no longer
    matches its rule, and its first half would go out as ordinary text."""
    data = read_at_most(fd, MAX_SCAN_BYTES + 1)
    cut = len(data) > MAX_SCAN_BYTES
    data = data[:MAX_SCAN_BYTES]
    if b"\x00" in data[:BINARY_PROBE_BYTES]:
        raise ToolFailure(ErrorCode.NOT_A_FILE, f"'{shown}' is not a text file")
    text = plain_lines(data.decode("utf-8", errors="replace"))
    if cut:
        text = complete_words(text)
    return redactor.redact_text(text), cut


def _char_boundary(data: bytes, index: int) -> int:
    """``index`` moved back to the start of the UTF-8 character it falls in (or ``len``)."""
    if index >= len(data):
        return len(data)
    while index > 0 and data[index] & 0xC0 == 0x80:
        index -= 1
    return index


def _entry_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "link (not followed)"
    return "special (not readable)"


def _prefix(parts: tuple[str, ...]) -> str:
    return "/".join(parts) + "/" if parts else ""
