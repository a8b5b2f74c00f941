"""The syntax check of Function sources in a child process, remembered by source hash.

``serve`` and every reload check the catalogue's sources like ``validate`` does (one verdict for
all of them, ``bridge.app.serving.folder_verdict``), but the serving process must not load V8 for
it: the Functions run in worker processes, and a V8 isolate in the bridge itself would stay in its
memory for good. So the sources go to a short-lived ``python -m bridge.functions.syntax_child``
(stdin: a JSON list of sources; stdout: one result per source), and each result is remembered by
the source's SHA-256, so a reload that left the sources alone starts no process.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import threading
from collections.abc import Sequence

from bridge.functions.syntax import SourceSyntaxError, check_syntax

CHILD_TIMEOUT_S = 300.0
"""One generous bound for the whole check (a loaded machine starts Python and V8 slowly)."""
_MAX_REMEMBERED = 4096

_known: dict[str, SourceSyntaxError | None] = {}
_lock = threading.Lock()


class SyntaxCheckFailed(Exception):
    """The child process did not answer (it crashed, or ran past ``CHILD_TIMEOUT_S``)."""


def syntax_errors(sources: Sequence[str]) -> list[SourceSyntaxError | None]:
    """For each source, its syntax error or ``None``; ``SyntaxCheckFailed`` when unknown."""
    keys = [_key(source) for source in sources]
    with _lock:
        known = dict(_known)
    missing = {key: source for key, source in zip(keys, sources, strict=True) if key not in known}
    if missing:
        found = dict(zip(missing, _in_child(list(missing.values())), strict=True))
        known.update(found)
        with _lock:
            if len(_known) + len(found) > _MAX_REMEMBERED:
                _known.clear()
            _known.update(found)
    return [known[key] for key in keys]


def _key(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def _in_child(sources: list[str]) -> list[SourceSyntaxError | None]:
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bridge.functions.syntax_child"],
            input=json.dumps(sources).encode("utf-8", "surrogatepass"),
            capture_output=True,
            timeout=CHILD_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SyntaxCheckFailed(f"the Function syntax check did not finish: {exc}") from None
    try:
        answers = json.loads(done.stdout)
        if done.returncode != 0 or len(answers) != len(sources):
            raise ValueError
        return [None if item is None else SourceSyntaxError(*item) for item in answers]
    except (ValueError, TypeError):
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise SyntaxCheckFailed(
            f"the Function syntax check failed (exit {done.returncode}): {tail[0]}"
        ) from None


def main() -> int:
    sources = json.loads(sys.stdin.buffer.read())
    answers = []
    for source in sources:
        error = check_syntax(source)
        answers.append(None if error is None else [error.line, error.column, error.message])
    sys.stdout.write(json.dumps(answers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
