"""The bridge column: audit records read back from the JSON-lines file as they are appended."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bridge.playground.audit_tail import MAX_CHARS, describe, follow

WAIT_S = 20.0


def record(kind: str, **fields: object) -> str:
    return json.dumps({"at": "2026-01-01T00:00:00Z", "kind": kind, "fields": fields})


def test_a_record_is_its_kind_and_fields_without_the_ids() -> None:
    line = record("tool.result", name="player_snapshot", output_chars=610, session_id="s-1")
    assert describe(line) == 'tool.result name="player_snapshot" output_chars=610'


def test_lines_that_are_not_records_are_skipped_and_long_ones_cut() -> None:
    assert describe("not json") is None
    assert describe("[1]") is None
    assert describe('{"fields": {}}') is None
    long = describe(record("turn.end", text="x" * 2000))
    assert long is not None and len(long) == MAX_CHARS and long.endswith("…")


async def test_follow_reports_new_records_only_and_waits_for_a_whole_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text(record("old.record") + "\n")
    seen: asyncio.Queue[str] = asyncio.Queue()
    task = asyncio.create_task(follow(path, seen.put_nowait))
    await asyncio.sleep(0)  # the tail starts: what is in the file now is not new
    try:
        line = record("tool.call", name="ask_player")
        with path.open("a") as handle:
            handle.write(line[:10])
            handle.flush()
            await asyncio.sleep(0)  # the tail may run now and must keep the half line
            handle.write(line[10:] + "\n")
        assert await asyncio.wait_for(seen.get(), WAIT_S) == 'tool.call name="ask_player"'
        assert seen.empty()
    finally:
        task.cancel()
