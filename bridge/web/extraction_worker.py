"""The extraction worker: a child process that turns a fetched body into text.

Everything a stranger's page is parsed with runs here, never in the bridge: the charset guess,
lxml's parser and trafilatura. ``bridge.web.extraction_pool`` keeps a few of these processes
warm and kills one at the fetch's deadline; this side adds what the process can enforce on
itself: the lowest scheduling priority (Linux's idle class, and niceness 19), an address-space
limit (``RLIMIT_AS``) and, per page, a CPU-time limit (``RLIMIT_CPU``, raised from the CPU
time already used), so even a worker its parent forgot is ended.

The wire is frames on stdin and stdout: a 4-byte big-endian length and that many bytes. A job
is two frames (a JSON header, then the raw body); the answer is one frame of JSON per stage.
A compressed body (the header names its ``encoding``) is inflated here first, bounded
(``bridge.web.inflate``). For HTML the first stage is the linear plain-text fallback
(``bridge.web.extract.plain_text``), the second trafilatura's text: when the parent cuts the
second off it already holds the first. Any other text is decoded only (one ``done`` frame).
Each text (and title) is redacted here with the rules the header carries, whole, then cut to
the caller's limit: the bridge redacts the answer again (its configured secrets are never sent
here), but over a text with nothing of the page's left to replace, which costs its event loop
one search instead of work a page chooses.
Run as ``python -m bridge.web.extraction_worker MEMORY_BYTES [plain]`` (``plain``: the plain
lane's worker, which answers the fallback only).
"""

from __future__ import annotations

import json
import logging
import os
import resource
import struct
import sys
from collections.abc import Sequence
from typing import IO, Any

FRAME = struct.Struct(">I")
MAX_JOB_BYTES = 32_000_000
"""The largest frame a worker reads: a body is at most ``web.max_bytes`` (20 MB)."""
MAX_HEADER_BYTES = 1 << 20
"""A job's header: small, but it carries the owner's redaction rules (each up to 1 KiB)."""
NICENESS = 19
"""The lowest there is: where the idle scheduling class is missing, a page being parsed takes
about 1.5% of a core a player's turn wants (CFS weight 15 against 1024; at 10 it was a tenth)."""


def read_frame(stream: IO[bytes], limit: int) -> bytes | None:
    """One frame, or None at the end of the stream; ``EOFError`` for a cut or oversized one."""
    head = stream.read(FRAME.size)
    if not head:
        return None
    if len(head) < FRAME.size:
        raise EOFError("the stream ended inside a frame's length")
    (size,) = FRAME.unpack(head)
    if size > limit:
        raise EOFError(f"a frame of {size} bytes is over {limit}")
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the stream ended inside a frame")
    return data


def write_frame(stream: IO[bytes], data: bytes) -> None:
    stream.write(FRAME.pack(len(data)) + data)
    stream.flush()


def write_chunks(stream: IO[bytes], chunks: Sequence[bytes]) -> None:
    """One frame of ``chunks`` joined, written chunk by chunk: a body is never copied whole
    (each write copies into the pipe without holding the GIL)."""
    stream.write(FRAME.pack(sum(len(chunk) for chunk in chunks)))
    for chunk in chunks:
        stream.write(chunk)
    stream.flush()


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _cap(text: str, limit: int) -> tuple[str, bool]:
    return (text[:limit], True) if len(text) > limit else (text, False)


_redactors: dict[str, Any] = {}
"""The job's redaction rules (JSON) -> their compiled ``Redactor``: the bridge sends the same
rules with every page until the owner changes them."""


def _redactor(rules: list[list[str]]) -> Any:
    """A ``Redactor`` of exactly ``rules`` (the bridge's whole list, its defaults included),
    without configured secret values: this process reads strangers' pages and is given no
    secret; the bridge's own redaction of the answer looks for those."""
    from bridge.redaction import RedactionRule, Redactor

    key = json.dumps(rules)
    if key not in _redactors:
        chosen = [RedactionRule(kind=kind, pattern=pattern) for kind, pattern in rules]
        _redactors.clear()
        _redactors[key] = Redactor(chosen, include_defaults=False)
    return _redactors[key]


def serve(job: dict[str, Any], body: bytes, send: Any, *, plain_only: bool = False) -> None:
    """Answer one job through ``send`` (a frame's JSON as a dict); ``plain_only``: the plain
    lane's worker, which stops after the fallback. With ``redaction`` rules in the job, a
    text and its title are redacted here, whole, before the text is cut to the limit."""
    from bridge.web.content import MediaType, decode
    from bridge.web.extract import extract_html, plain_text
    from bridge.web.inflate import Uninflatable, inflate

    limit = int(job["limit"])
    rules = job.get("redaction") or []
    redactor = _redactor(rules) if rules else None

    def shown(text: str) -> tuple[str, bool]:
        return _cap(text if redactor is None else redactor.redact_text(text), limit)

    def titled(title: str | None) -> str | None:
        return title if redactor is None or title is None else redactor.redact_text(title)

    inflated_cut, note = False, None
    if job.get("encoding"):
        try:
            inflated = inflate(body, str(job["encoding"]), int(job["cap"]))
        except Uninflatable as exc:
            send({"stage": "refused", "why": str(exc)})
            return
        body, inflated_cut, note = inflated.body, inflated.cut, inflated.note
    media = MediaType(str(job["essence"]), job.get("charset"))
    decoded = decode(body, media, job["kind"])
    said = {"charset": decoded.charset, "refused": decoded.refused, "note": note}
    if job["kind"] != "html":
        text, cut = shown(decoded.text)
        send({"stage": "done", "title": None, "text": text, "cut": cut or inflated_cut, **said})
        return
    fallback = plain_text(decoded.text)
    text, cut = shown(fallback.text)
    cut = cut or inflated_cut
    title = titled(fallback.title)
    send({"stage": "fallback", "title": title, "text": text, "cut": cut, **said})
    if plain_only:
        return
    main = extract_html(decoded.text, str(job["url"]))
    text, cut = shown(main.text)
    cut = cut or inflated_cut
    send({"stage": "main", "title": titled(main.title), "text": text, "cut": cut, **said})


def _idle_class() -> None:
    """Linux's idle scheduling class: the worker runs only when no other process of normal
    priority wants the CPU, so the bridge's loop never waits behind a page (niceness alone
    still gives a nice-19 process about 1.5% of a shared core). Lowering one's own class needs no
    privilege; where it is missing the niceness stays."""
    if hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE"):
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        except OSError:
            pass


def main(argv: list[str]) -> int:
    memory = int(argv[1])
    plain_only = argv[2:] == ["plain"]  # the plain lane: lxml only, trafilatura never imported
    # Frames go to a copy of stdout; whatever a library prints goes to stderr instead.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    source = sys.stdin.buffer
    os.setpriority(os.PRIO_PROCESS, 0, NICENESS)
    _idle_class()
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    logging.disable(logging.CRITICAL)  # trafilatura logs what it thinks of each page
    # Warm: the imports are done once, before the first job waits for them.
    import charset_normalizer  # noqa: F401
    import lxml.html  # noqa: F401

    import bridge.redaction  # noqa: F401

    if not plain_only:
        import trafilatura  # noqa: F401
        from trafilatura.metadata import extract_metadata  # noqa: F401

    def send(frame: dict[str, Any]) -> None:
        write_frame(out, json.dumps(frame, ensure_ascii=False).encode("utf-8", "replace"))

    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    while True:
        header = read_frame(source, MAX_HEADER_BYTES)
        if header is None:
            return 0  # the bridge closed the pipe, or died
        body = read_frame(source, MAX_JOB_BYTES)
        if body is None:
            return 0
        job = json.loads(header)
        # Only this page's seconds from now on: past them the kernel ends the process.
        soft = int(_cpu_used()) + max(1, int(job["cpu_s"])) + 1
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
        try:
            serve(job, body, send, plain_only=plain_only)
        except MemoryError:
            send({"stage": "failed", "why": "memory"})
            return 3  # a process that ran out of memory is not trusted with the next page
        except Exception as exc:  # a parser's error on a hostile page: said, and the next job
            send({"stage": "failed", "why": type(exc).__name__})


if __name__ == "__main__":
    sys.exit(main(sys.argv))
